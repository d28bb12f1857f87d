"""Reading a training curve: the step at which a run reached an accuracy, and a smoothed curve to plot.

Both take one run (a :class:`helpers.TrainHistory`) or many at once (a :class:`helpers.recall_runs.RunsHistory` or an
(R, steps) tensor) and apply the same rule to each.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from helpers import _validate as check
from helpers.recall_runs import RunsHistory
from helpers.training import TrainHistory

__all__ = ["moving_average", "steps_to_accuracy"]


def steps_to_accuracy(
    history: TrainHistory | RunsHistory | Tensor, target: float, window: int = 20
) -> int | None | Tensor:
    """The first step (1-based, ``window`` at the earliest) at which the accuracy, averaged over the last
    ``window`` steps, reaches ``target`` in [0, 1].

    One run (a :class:`TrainHistory`): that step, or ``None`` if it never gets there. Many runs (a
    :class:`RunsHistory` or an (R, steps) accuracy tensor): an (R,) float32 tensor of them, ``inf`` for never.
    """
    check.instance("history", history, (TrainHistory, RunsHistory, Tensor), "a TrainHistory, a RunsHistory or a tensor")
    check.real("target", target, 0.0, 1.0)
    check.integer("window", window)
    if not isinstance(history, TrainHistory):
        accuracy = history.accuracy if isinstance(history, RunsHistory) else history
        check.float_tensor("history", accuracy)
        check.dims("history", accuracy, 2, "R runs, steps")
        return _steps_to_accuracy_runs(accuracy, target, window)
    acc = torch.tensor(history.accuracy, dtype=torch.float64)
    if acc.numel() < window:
        return None
    running = acc.unfold(0, window, 1).mean(dim=1)
    hits = (running >= target - 1e-12).nonzero()
    return int(hits[0, 0]) + window if hits.numel() else None


def _steps_to_accuracy_runs(accuracy: Tensor, target: float, window: int) -> Tensor:
    # The single-run rule above, row by row: same float64 running mean, same threshold.
    acc = accuracy.detach().to("cpu", torch.float64)
    never = torch.full((acc.shape[0],), math.inf)
    if acc.shape[1] < window:
        return never
    hits = acc.unfold(1, window, 1).mean(dim=2) >= target - 1e-12  # (R, steps - window + 1)
    first = hits.to(torch.int8).argmax(dim=1)  # index of the first True (0 when there is none)
    return torch.where(hits.any(dim=1), (first + window).to(torch.float32), never)


def moving_average(values: list[float] | Tensor, window: int = 10) -> Tensor:
    """(steps,) float32: the mean of the last ``window`` values of ``values`` (steps,) at every step (fewer at
    the start), for readable curves."""
    window = check.integer("window", window)
    curve = torch.as_tensor(values, dtype=torch.float32)
    check.dims("values", curve, 1, "one curve")
    sums = torch.cat([torch.zeros(1), curve.cumsum(dim=0)])
    steps = torch.arange(1, len(curve) + 1)
    counts = steps.clamp(max=window)
    return (sums[steps] - sums[steps - counts]) / counts
