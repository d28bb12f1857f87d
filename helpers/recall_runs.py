"""Many runs of chapter 6's recall model (:mod:`helpers.training`), trained as one batched program.

A chapter's grid (seeds × learning rates × scales × widths) is R independent runs of the model.
:func:`train_recall_runs` trains them together: runs of one d_k are stacked, every parameter getting a leading run
axis, e.g. ``w_q`` (R, d_k, D); each step is one batched forward pass, one backward pass and one optimizer update
with a learning rate per run (:mod:`helpers.run_stack`). Run ``r`` starts from the parameters and sees the batches
that ``train_recall(seed=seeds[r])`` would; its float32 results differ from that single run's in the last bits only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.run_stack import RunStack
from helpers.training import _OPTIMIZERS, RecallBatch, RecallModel, TrainHistory, _draw_recall_batch

__all__ = ["RunsHistory", "init_recall_runs", "train_recall_runs"]


@dataclass
class RunsHistory:
    """What :func:`train_recall_runs` records: one row per run, one column per step.

    Every field is a float32 CPU tensor of shape (R, steps), measured like :class:`TrainHistory` on that step's
    fresh batch, before the update.

    Attributes:
        loss: cross-entropy of each run.
        accuracy: share of the batch answered correctly.
        attention_on_answer: mean attention weight on the pair that holds the answer.
        max_weight: mean over the batch of each attention row's largest weight (1/P for uniform attention, 1 for
            one-hot).
        saturated: share of the batch's attention rows whose largest weight is >= 0.99.
        logit_std: standard deviation of the attention logits ``scale · q·k`` over the batch's B·P of them
            (Bessel-corrected, as ``Tensor.std``).
        temperature: the factor ``e^τ`` of a learnable temperature (see ``learn_temperature`` in
            :func:`train_recall_runs`) on top of the scale; 1 for a run that learns none (``None`` in a history
            built by hand).
    """

    loss: Tensor
    accuracy: Tensor
    attention_on_answer: Tensor
    max_weight: Tensor
    saturated: Tensor
    logit_std: Tensor
    temperature: Tensor | None = None  # always set by train_recall_runs

    def __len__(self) -> int:
        """R, the number of runs."""
        return self.loss.shape[0]

    def run(self, index: int) -> TrainHistory:
        """Run ``index`` as a :class:`TrainHistory` (lists of floats), as :func:`train_recall` returns it."""
        index = check.integer("index", index, -len(self), len(self))
        return TrainHistory(
            loss=self.loss[index].tolist(),
            accuracy=self.accuracy[index].tolist(),
            attention_on_answer=self.attention_on_answer[index].tolist(),
        )


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
    """The initial parameters of R runs, stacked along a leading run axis.

    Entry ``r`` of every tensor is bit-identical to the parameter of ``RecallModel(n_keys, n_values, d_model, d_k,
    qk_gain=qk_gain)`` built right after ``torch.manual_seed(seeds[r])``, which is what :func:`train_recall` trains.
    The scale has no parameters, so it plays no part here. One model is built per distinct seed, inside
    :func:`torch.random.fork_rng`: the caller's global random state is left as it was.

    Args:
        seeds: R seeds, ints >= 0; repeats are allowed.
        n_keys, n_values, d_model, d_k, qk_gain: as in :class:`RecallModel`.
        device: where the returned tensors live (default: the CPU).

    Returns:
        ``RecallModel``'s ``state_dict`` names mapped to (R, *shape) float32 tensors: ``key_embedding.weight`` (R,
        n_keys, D), ``value_embedding.weight`` (R, n_values, D), ``w_q.weight`` and ``w_k.weight`` (R, d_k, D),
        ``w_v.weight`` (R, D, D), ``readout.weight`` (R, n_values, D), ``readout.bias`` (R, n_values).
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
    qk_gain=qk_gain[r])``: the same initial parameters (:func:`init_recall_runs`), the same batches (one CPU
    generator per distinct seed, so runs that share a seed share every batch) and the same update rule (plain SGD,
    or Adam with torch's defaults, as ``torch.optim.Adam(fused=True)`` computes it), evaluated in another order (see
    the module docstring), so its curves match the single run's up to float32 rounding. The runs share nothing: a
    run that diverges to NaN or inf leaves every other run's history unchanged.

    Runs of one ``d_k`` are stacked together; runs of several widths (``d_k`` a sequence) train in the same step
    loop, one stack per width, on the same batches.

    A run may also learn a temperature: a scalar ``τ`` of its own, starting at 0, that multiplies its attention
    logits by ``e^τ`` on top of its scale and is trained with the other parameters, by the same optimizer at the
    same learning rate (its gradient is ``Σ z ∂L/∂z`` over the run's logits ``z``). It has no single-run counterpart
    in :func:`train_recall`. A run that learns none keeps ``τ = 0`` exactly (its gradient is zeroed), and a stack in
    which no run learns one skips it, so such runs are bit-identical to the same runs without the option.

    Speed: a run costs about a sixth of the multiply–adds of :func:`train_recall` and none of its per-step Python
    overhead. On a busy two-core machine call it under ``torch.set_num_threads(1)``: these matmuls are small, and a
    second thread mostly waits for the other, busy core (measured: several times slower).

    Args:
        scales: R multipliers of the attention logits; ``None`` means ``1 / sqrt(d_k)`` of that run.
        lrs: R learning rates, finite and > 0.
        seeds: R seeds (ints >= 0) of the parameters and the data.
        optimizer: ``"adam"`` or ``"sgd"``, for every run.
        steps, batch_size, n_pairs, n_keys, n_values, d_model: as in :func:`train_recall`.
        d_k: the width of queries and keys: one int for every run, or R of them.
        qk_gain: the factor of the initial ``W_q`` and ``W_k`` (:class:`RecallModel`): one number for every run, or
            R of them.
        device: where to compute (default: the CPU); the data are drawn on the CPU and moved there.
        learn_temperature: whether each run learns a temperature ``e^τ`` (see above): one bool for every run, or R
            of them.

    Returns:
        A :class:`RunsHistory` of (R, steps) float32 CPU tensors, in the order of the runs.
    """
    scales = check.each("scales", scales, check.optional_scale)
    lrs = check.each("lrs", lrs, check.positive_real)
    seeds = check.each("seeds", seeds, check.seed)
    d_ks = (
        [check.positive_int("d_k", d_k)] * len(seeds)
        if isinstance(d_k, int)
        else check.each("d_k", d_k, check.positive_int)
    )
    gains = check.each("qk_gain", [qk_gain] * len(seeds) if _is_number(qk_gain) else qk_gain, check.positive_real)
    learns = (
        [check.boolean("learn_temperature", learn_temperature)] * len(seeds)
        if isinstance(learn_temperature, bool)
        else check.each("learn_temperature", learn_temperature, check.boolean)
    )
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
        per_seed = [_draw_recall_batch(batch_size, n_pairs, n_keys, n_values, g) for g in generators]
        batch = RecallBatch(*(torch.stack(field).to(device) for field in zip(*per_seed, strict=True)))  # (S, B, ...)
        for stack in stacks:
            stack.step(batch, step)
    record = torch.empty(7, len(seeds), steps)
    for stack in stacks:
        record[:, stack.runs] = stack.record.cpu()
    return RunsHistory(*record.unbind(0))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
