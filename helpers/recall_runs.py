"""Many runs of chapter 6's recall model (:mod:`helpers.training`), trained as one batched program.

A chapter's grid (seeds × learning rates × scales × widths) is R independent runs. :func:`train_recall_runs` stacks
the runs of one d_k, every parameter getting a leading run axis (``w_q`` (R, d_k, D)), and takes one batched forward
pass, backward pass and update per step, with a learning rate per run (:mod:`helpers.run_stack`). Run ``r`` starts
from the parameters and sees the batches of ``train_recall(seed=seeds[r])``; its float32 results differ from that
single run's in the last bits only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.run_stack import RunStack
from helpers.training import _OPTIMIZERS, RecallBatch, RecallModel, TrainHistory, recall_batch

__all__ = ["RunsHistory", "init_recall_runs", "train_recall_runs"]


@dataclass
class RunsHistory:
    """What :func:`train_recall_runs` records: (R, steps) float32 CPU tensors, one row per run, measured on each
    step's fresh batch before the update: :class:`TrainHistory`'s three, the standard deviation of the batch's B·P
    attention logits ``scale · q·k`` (``logit_std``), and the learned factor ``e^τ`` on top of the scale
    (``temperature``: 1 where none is learned, ``None`` in a history built by hand)."""

    loss: Tensor
    accuracy: Tensor
    attention_on_answer: Tensor
    logit_std: Tensor
    temperature: Tensor | None = None  # always set by train_recall_runs

    def __len__(self) -> int:
        """R, the number of runs."""
        return self.loss.shape[0]

    def run(self, index: int) -> TrainHistory:
        """Run ``index`` as a :class:`TrainHistory` (lists of floats), as :func:`train_recall` returns it."""
        index = check.integer("index", index, -len(self), len(self))
        return TrainHistory(*(field[index].tolist() for field in (self.loss, self.accuracy, self.attention_on_answer)))


def init_recall_runs(
    seeds: Iterable[int],
    n_keys: int = 32,
    n_values: int = 32,
    d_model: int = 64,
    d_k: int = 64,
    *,
    qk_gain: float = 1.0,
    device: torch.device | str | None = None,
) -> dict[str, Tensor]:
    """The initial parameters of R runs: ``RecallModel``'s ``state_dict`` names mapped to (R, *shape) tensors.

    Entry ``r`` is bit-identical to the parameter of ``RecallModel(n_keys, n_values, d_model, d_k,
    qk_gain=qk_gain)`` built right after ``torch.manual_seed(seeds[r])``, as :func:`train_recall` builds it. The
    caller's global random state is left as it was.
    """
    seeds = check.each("seeds", seeds, check.seed)
    check.positive_ints(n_keys=n_keys, n_values=n_values, d_model=d_model, d_k=d_k)
    check.positive_real("qk_gain", qk_gain)
    states = _initial_states([(seed, d_k, qk_gain) for seed in seeds], n_keys, n_values, d_model)
    names = list(states[seeds[0], d_k, qk_gain])
    return {name: torch.stack([states[seed, d_k, qk_gain][name] for seed in seeds]).to(device) for name in names}


def _initial_states(
    models: Iterable[tuple[int, int, float]], n_keys: int, n_values: int, d_model: int
) -> dict[tuple[int, int, float], dict[str, Tensor]]:
    """The ``state_dict`` of ``RecallModel`` for each distinct (seed, d_k, qk_gain), built after manual_seed(seed)."""
    states = {}
    with torch.random.fork_rng(devices=[]):
        for seed, d_k, qk_gain in dict.fromkeys(models):  # distinct models, in order of appearance
            torch.manual_seed(effective_seed(seed))
            states[seed, d_k, qk_gain] = RecallModel(n_keys, n_values, d_model, d_k, qk_gain=qk_gain).state_dict()
    return states


def train_recall_runs(
    scales: Iterable[float | None],
    lrs: Iterable[float],
    seeds: Iterable[int],
    optimizer: str = "adam",
    *,
    steps: int = 300,
    batch_size: int = 32,
    n_pairs: int = 16,
    n_keys: int = 32,
    n_values: int = 32,
    d_model: int = 64,
    d_k: int | Iterable[int] = 64,
    qk_gain: float | Iterable[float] = 1.0,
    device: torch.device | str | None = None,
    learn_temperature: bool | Iterable[bool] = False,
) -> RunsHistory:
    """Train R independent runs of :func:`train_recall` at once, as one batched program.

    Run ``r`` is ``train_recall(scales[r], optimizer, lrs[r], seeds[r], steps, ..., d_k=d_k[r],
    qk_gain=qk_gain[r])``: the same initial parameters, batches and update (SGD, or Adam as
    ``torch.optim.Adam(fused=True)`` computes it) in another order (:mod:`helpers.run_stack`), so its curves match the
    single run's up to float32 rounding; one that diverges leaves the others unchanged. ``d_k``, ``qk_gain`` and
    ``learn_temperature`` are one value for every run, or R of them. Returns a :class:`RunsHistory`, runs in order.

    A run that learns a temperature has a scalar ``τ`` of its own, from 0, that multiplies its logits by ``e^τ`` on
    top of its scale (its gradient: ``Σ z ∂L/∂z`` over its logits ``z``); a run that learns none is bit-identical to
    the same run without the option. On a busy two-core machine call this under ``torch.set_num_threads(1)``: the
    matmuls are small, and a second thread mostly waits for the busy core.
    """
    scales = check.each("scales", scales, check.optional_scale)
    lrs = check.each("lrs", lrs, check.positive_real)
    seeds = check.each("seeds", seeds, check.seed)
    d_ks = _per_run("d_k", d_k, int, check.integer, len(seeds))
    gains = _per_run("qk_gain", qk_gain, (int, float), check.positive_real, len(seeds))
    learns = _per_run("learn_temperature", learn_temperature, bool, check.boolean, len(seeds))
    check.same_length("run", scales=scales, lrs=lrs, seeds=seeds, d_k=d_ks, qk_gain=gains, learn_temperature=learns)
    check.one_of("optimizer", optimizer, _OPTIMIZERS)
    check.positive_ints(
        steps=steps, batch_size=batch_size, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values, d_model=d_model
    )
    check.at_most("n_pairs", n_pairs, "n_keys", n_keys, "keys are distinct within an example")
    device = torch.device("cpu" if device is None else device)

    states = _initial_states(zip(seeds, d_ks, gains, strict=True), n_keys, n_values, d_model)
    distinct = list(dict.fromkeys(seeds))
    generators = [torch.Generator().manual_seed(effective_seed(seed)) for seed in distinct]
    stacks = []
    for width in dict.fromkeys(d_ks):  # one stack per width; inside it, runs sorted by learning rate
        runs = sorted((r for r in range(len(seeds)) if d_ks[r] == width), key=lambda r: lrs[r])
        stacks.append(
            RunStack(
                runs,
                [states[seeds[r], width, gains[r]] for r in runs],
                [check.scale("scales", scales[r], 1.0 / math.sqrt(width)) for r in runs],
                [lrs[r] for r in runs],
                [distinct.index(seeds[r]) for r in runs],
                optimizer,
                steps,
                device,
                [learns[r] for r in runs],
            )
        )
    for step in range(steps):
        per_seed = [recall_batch(batch_size, n_pairs, n_keys, n_values, generator=g) for g in generators]
        batch = RecallBatch(*(torch.stack(field).to(device) for field in zip(*per_seed, strict=True)))  # (S, B, ...)
        for stack in stacks:
            stack.step(batch, step)
    record = torch.empty(5, len(seeds), steps)
    for stack in stacks:
        record[:, stack.runs] = stack.record.cpu()
    return RunsHistory(*record.unbind(0))


def _per_run(name: str, value: Any, one: type | tuple[type, ...], accept: Callable[[str, object], Any], n: int) -> Any:
    """``value`` checked by ``accept``: one of type ``one`` (a bool is no number) for each of n runs, or a list."""
    if isinstance(value, one) and (one is bool or not isinstance(value, bool)):
        return [accept(name, value)] * n
    return check.each(name, value, accept)
