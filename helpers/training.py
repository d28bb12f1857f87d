"""A tiny attention model trained on associative recall, to watch the scale at work.

The task (associative recall): each example shows ``n_pairs`` key–value pairs
and then one query key, taken from the pairs; the target is the value paired
with that key. Keys are distinct within an example, values are not. The only
way to answer is to attend to the pair whose key matches the query, so the
task measures whether attention learns to find the right position.

The model is one attention head and nothing else that could solve the task
alone::

    memory  = (key_embedding[pair_keys] + value_embedding[pair_values]) / sqrt(2)   # (B, P, D)
    query   = key_embedding[query_key]                                              # (B, 1, D)
    output, weights = scaled_dot_product_attention(query W_q, memory W_k, memory W_v, scale=scale)
    logits  = readout(output)                                                       # (B, n_values)

Embeddings are drawn from N(0, 1) and ``W_q``, ``W_k`` from N(0, 1/D), so at
initialisation the components of queries and keys have variance about 1, the
assumption under which the raw dot products have variance d_k. The ``scale``
(``None`` means ``1 / sqrt(d_k)``) is the multiplier of the logits, passed to
:func:`helpers.scaled_dot_product_attention`.

Shapes: ``B`` batch, ``P`` pairs per example, ``D`` model width, ``d_k`` the
width of queries and keys.

Many runs as one program
------------------------
A chapter's grid (seeds × learning rates × scales × widths) is R independent
runs of the model above. :func:`train_recall_runs` trains them together: runs
of one d_k are stacked, every parameter getting a leading run axis, e.g.
``w_q`` (R, d_k, D); each step is one batched forward pass, one backward pass
and one optimizer update with a learning rate per run. Run ``r`` starts from
the parameters and sees the batches that ``train_recall(seed=seeds[r])`` would.
With ``E`` the key embeddings stacked on the value embeddings, (R, V, D) with
``V = n_keys + n_values`` (row ``n_keys + j`` is value ``j``), the forward pass
computes the model's function in a cheaper order::

    q       = W_q key_embedding[query]                         # (R, B, d_k)
    u       = W_kᵀ q                                           # (R, B, D)   q·(W_k m) = (W_kᵀ q)·m
    s       = u Eᵀ                                             # (R, B, V)   u·e for every row e of E
    scores  = scale · (s[pair_key] + s[n_keys + pair_value]) / sqrt(2)     # (R, B, P) = scale · q·k
    weights = softmax(scores)                                  # (R, B, P)
    mass    = Σ_p weights_p (onehot(pair_key_p) + onehot(n_keys + pair_value_p)) / sqrt(2)   # (R, B, V)
    output  = W_v (mass E)                                     # (R, B, D)   = Σ_p weights_p W_v m_p
    logits  = readout(output)                                  # (R, B, n_values)

The model multiplies all P memory rows of an example by ``W_k`` and by
``W_v``; by linearity this order multiplies one vector per example each way
and compares it with the V rows of E instead: six times fewer multiply–adds
at the book's sizes (P = 16, D = d_k = 64, V = 64). The backward pass is the
chain rule through these lines, written out (no autograd graph), and the
update is torch's own SGD step or its fused Adam kernel, once per block of
runs that share a learning rate. The float32 results differ from the single
run's in the last bits only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, overload

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from helpers import _validate as check
from helpers.attention import scaled_dot_product_attention
from helpers.device import effective_seed

__all__ = [
    "RecallBatch",
    "RecallModel",
    "RunsHistory",
    "TrainHistory",
    "init_recall_runs",
    "moving_average",
    "recall_batch",
    "steps_to_accuracy",
    "train",
    "train_recall",
    "train_recall_runs",
]

_OPTIMIZERS = ("adam", "sgd")  # torch.optim.Adam with its defaults, or plain torch.optim.SGD


class RecallBatch(NamedTuple):
    """One batch of associative recall; every field is an int64 tensor.

    Attributes:
        pair_keys: (B, P) the keys of the pairs, distinct within a row, in [0, n_keys).
        pair_values: (B, P) the values of the pairs, in [0, n_values).
        query: (B,) the query key, one of the row's ``pair_keys``.
        target: (B,) the value paired with ``query``: the class to predict.
        position: (B,) the index in [0, P) of the pair that holds the answer.
    """

    pair_keys: Tensor
    pair_values: Tensor
    query: Tensor
    target: Tensor
    position: Tensor


def recall_batch(
    batch_size: int,
    n_pairs: int = 16,
    n_keys: int = 32,
    n_values: int = 32,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> RecallBatch:
    """Draw a batch of associative-recall examples.

    The numbers are drawn on the CPU from ``generator`` (so a seeded generator
    gives the same batch on every device) and then moved to ``device``.

    Args:
        batch_size: B, the number of examples.
        n_pairs: P, the key–value pairs per example; at most ``n_keys``.
        n_keys: size of the key vocabulary.
        n_values: size of the value vocabulary (the number of classes).
        generator: a CPU ``torch.Generator``; ``None`` uses torch's global one.
        device: where the returned tensors live (default: the CPU).

    Returns:
        A :class:`RecallBatch` of int64 tensors with shapes (B, P), (B, P), (B,), (B,), (B,).
    """
    check.positive_ints(batch_size=batch_size, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
    check.at_most("n_pairs", n_pairs, "n_keys", n_keys, "keys are distinct within an example")
    check.instance("generator", generator, (torch.Generator, type(None)), "a torch.Generator or None")
    return _draw_recall_batch(batch_size, n_pairs, n_keys, n_values, generator, device)


def _draw_recall_batch(
    batch_size: int,
    n_pairs: int,
    n_keys: int,
    n_values: int,
    generator: torch.Generator | None,
    device: torch.device | str | None = None,
) -> RecallBatch:
    """:func:`recall_batch` without the checks, for the training loops that draw one batch per step."""
    pair_keys = torch.rand(batch_size, n_keys, generator=generator).argsort(dim=-1)[:, :n_pairs]
    pair_values = torch.randint(0, n_values, (batch_size, n_pairs), generator=generator)
    position = torch.randint(0, n_pairs, (batch_size,), generator=generator)
    rows = torch.arange(batch_size)
    batch = RecallBatch(pair_keys, pair_values, pair_keys[rows, position], pair_values[rows, position], position)
    return RecallBatch(*(t.to(device) for t in batch)) if device is not None else batch


class RecallModel(nn.Module):
    """One attention head that reads a set of key–value pairs and answers a query key.

    Args:
        n_keys: size of the key vocabulary.
        n_values: size of the value vocabulary (the number of output classes).
        d_model: D, the width of the embeddings.
        d_k: the width of queries and keys (the sum in each dot product runs over it).
        scale: the multiplier of the attention logits; ``None`` means ``1 / sqrt(d_k)``.
        qk_gain: multiplies the initial ``W_q`` and ``W_k`` (each), so that the initial
            logits are ``qk_gain**2`` times larger. With ``scale=1.0`` and ``qk_gain =
            d_k**-0.25`` the factor 1/sqrt(d_k) sits in the initialisation instead of
            the forward pass, as T5 does; ``qk_gain = d_k**0.25`` with the default
            scale starts the logits as widely spread as without the scale.
    """

    def __init__(
        self,
        n_keys: int = 32,
        n_values: int = 32,
        d_model: int = 64,
        d_k: int = 64,
        scale: float | None = None,
        qk_gain: float = 1.0,
    ) -> None:
        super().__init__()
        check.positive_ints(n_keys=n_keys, n_values=n_values, d_model=d_model, d_k=d_k)
        self.scale = check.optional_scale("scale", scale)
        qk_gain = check.positive_real("qk_gain", qk_gain)
        self.d_k = d_k
        self.key_embedding = nn.Embedding(n_keys, d_model)  # N(0, 1) by default
        self.value_embedding = nn.Embedding(n_values, d_model)
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.readout = nn.Linear(d_model, n_values)
        for layer in (self.w_q, self.w_k):  # unit-variance queries and keys at initialisation (times qk_gain)
            nn.init.normal_(layer.weight, std=qk_gain / math.sqrt(d_model))

    def forward(self, pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> tuple[Tensor, Tensor]:
        """Answer the query.

        Args:
            pair_keys: (B, P) int64 keys.
            pair_values: (B, P) int64 values.
            query: (B,) int64 query keys.

        Returns:
            ``(logits, weights)``: class logits (B, n_values) and the attention
            weights (B, P) of the query over the pairs.
        """
        for name, tensor in (("pair_keys", pair_keys), ("pair_values", pair_values), ("query", query)):
            check.tensor(name, tensor, torch.int64)
        check.dims("pair_keys", pair_keys, 2, "B, P")
        check.shape("pair_values", pair_values, tuple(pair_keys.shape), "(B, P)")
        check.shape("query", query, tuple(pair_keys.shape[:1]), "(B,)")
        memory = (self.key_embedding(pair_keys) + self.value_embedding(pair_values)) / math.sqrt(2.0)
        q = self.w_q(self.key_embedding(query)).unsqueeze(1)  # (B, 1, d_k)
        output, weights = scaled_dot_product_attention(q, self.w_k(memory), self.w_v(memory), scale=self.scale)
        return self.readout(output.squeeze(1)), weights.squeeze(1)


@dataclass
class TrainHistory:
    """What :func:`train` records at every step, on that step's (fresh) training batch.

    Attributes:
        loss: cross-entropy per step, length ``steps``.
        accuracy: share of the batch answered correctly per step, length ``steps``.
        attention_on_answer: mean attention weight on the pair that holds the answer, per step.
    """

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    attention_on_answer: list[float] = field(default_factory=list)


def train(
    model: RecallModel,
    optimizer: torch.optim.Optimizer,
    steps: int,
    batch_size: int = 32,
    n_pairs: int = 16,
    *,
    seed: int = 0,
    device: torch.device | str | None = None,
    task: Callable[[RecallBatch], RecallBatch] | None = None,
) -> TrainHistory:
    """Train ``model`` on fresh associative-recall batches, one per step.

    Every batch is new, so the training loss is also a test loss. The data
    come from a CPU generator seeded with ``seed``: the same seed gives the
    same batches on every device.

    Args:
        model: the model; its embeddings fix ``n_keys`` and ``n_values``.
        optimizer: an optimizer over ``model``'s parameters.
        steps: the number of optimizer steps.
        batch_size: B, examples per step.
        n_pairs: P, key–value pairs per example.
        seed: seed of the data generator.
        device: where to compute (default: where the model's parameters are).
        task: where given, turns each drawn batch into another task's batch (the generator
            advances as for recall): :mod:`helpers.controls`' shared-value task.

    Returns:
        A :class:`TrainHistory` with one entry per step.
    """
    check.instance("model", model, RecallModel, "a RecallModel")
    check.instance("optimizer", optimizer, torch.optim.Optimizer, "a torch.optim.Optimizer")
    check.positive_ints(steps=steps, batch_size=batch_size, n_pairs=n_pairs)
    n_keys, n_values = model.key_embedding.num_embeddings, model.value_embedding.num_embeddings
    check.at_most("n_pairs", n_pairs, "n_keys", n_keys, "keys are distinct within an example")
    generator = torch.Generator().manual_seed(effective_seed(seed))
    device = next(model.parameters()).device if device is None else torch.device(device)
    history = TrainHistory()
    for _ in range(steps):
        batch = _draw_recall_batch(batch_size, n_pairs, n_keys, n_values, generator, device)
        if task is not None:
            batch = task(batch)
        logits, weights = model(batch.pair_keys, batch.pair_values, batch.query)
        loss = nn.functional.cross_entropy(logits, batch.target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # Tensor.backward is unannotated in torch
        optimizer.step()
        with torch.no_grad():
            history.loss.append(loss.item())
            history.accuracy.append((logits.argmax(-1) == batch.target).float().mean().item())
            history.attention_on_answer.append(weights.gather(1, batch.position[:, None]).mean().item())
    return history


def train_recall(
    scale: float | None = None,
    optimizer: str = "adam",
    lr: float = 1e-2,
    seed: int = 0,
    steps: int = 300,
    batch_size: int = 32,
    n_pairs: int = 16,
    n_keys: int = 32,
    n_values: int = 32,
    d_model: int = 64,
    d_k: int = 64,
    device: torch.device | str | None = None,
    qk_gain: float = 1.0,
    task: Callable[[RecallBatch], RecallBatch] | None = None,
) -> TrainHistory:
    """Build a :class:`RecallModel` from ``seed``, train it, return its history.

    One call per point of an experiment: ``train_recall(scale=1.0)`` is attention
    without its scale, ``train_recall()`` the standard ``1 / sqrt(d_k)``.

    Args:
        scale: the multiplier of the attention logits; ``None`` means ``1 / sqrt(d_k)``.
        optimizer: ``"adam"`` (``torch.optim.Adam``) or ``"sgd"`` (plain ``torch.optim.SGD``).
        lr: learning rate.
        seed: seeds the parameters (``torch.manual_seed``) and the data.
        steps, batch_size, n_pairs: as in :func:`train`.
        n_keys, n_values, d_model, d_k: as in :class:`RecallModel`.
        device: where to compute (default: the CPU).
        qk_gain: as in :class:`RecallModel`.
        task: as in :func:`train`.

    Returns:
        The :class:`TrainHistory` of the run.
    """
    check.one_of("optimizer", optimizer, _OPTIMIZERS)
    check.positive_real("lr", lr)
    torch.manual_seed(effective_seed(seed))
    model = RecallModel(n_keys, n_values, d_model, d_k, scale, qk_gain)
    if device is not None:
        model = model.to(device)
    opt_class = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = opt_class(model.parameters(), lr=lr)
    return train(model, opt, steps, batch_size, n_pairs, seed=seed, device=device, task=task)


@overload
def steps_to_accuracy(history: TrainHistory, target: float, window: int = 20) -> int | None: ...
@overload
def steps_to_accuracy(history: RunsHistory | Tensor, target: float, window: int = 20) -> Tensor: ...


def steps_to_accuracy(
    history: TrainHistory | RunsHistory | Tensor, target: float, window: int = 20
) -> int | None | Tensor:
    """The first step at which the accuracy, averaged over the last ``window`` steps, reaches ``target``.

    Args:
        history: a :class:`TrainHistory` (one run), or many runs at once: a
            :class:`RunsHistory` or an (R, steps) accuracy tensor.
        target: accuracy in [0, 1].
        window: length of the running mean (steps); the first possible answer is ``window``.

    Returns:
        One run: the number of steps taken (1-based), or ``None`` if the run never
        gets there. Many runs: an (R,) float32 tensor of those numbers, ``inf``
        for a run that never gets there.
    """
    check.instance("history", history, (TrainHistory, RunsHistory, Tensor), "a TrainHistory, a RunsHistory or a tensor")
    check.real("target", target, 0.0, 1.0)
    check.positive_int("window", window)
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
    """Mean of the last ``window`` values at every step (fewer at the start), for readable curves.

    Args:
        values: (steps,) a training curve.
        window: how many steps each point averages.

    Returns:
        (steps,) the smoothed curve, as float32.
    """
    window = check.positive_int("window", window)
    curve = torch.as_tensor(values, dtype=torch.float32)
    check.dims("values", curve, 1, "one curve")
    sums = torch.cat([torch.zeros(1), curve.cumsum(dim=0)])
    steps = torch.arange(1, len(curve) + 1)
    counts = steps.clamp(max=window)
    return (sums[steps] - sums[steps - counts]) / counts


# ---------------------------------------------------------------------------
# Many runs as one program (see the module docstring for the shapes and the math)

_SATURATED = 0.99  # an attention row counts as saturated when its largest weight is at least this
_ADAM_BETAS, _ADAM_EPS = (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults


@dataclass
class RunsHistory:
    """What :func:`train_recall_runs` records: one row per run, one column per step.

    Every field is a float32 CPU tensor of shape (R, steps), measured like
    :class:`TrainHistory` on that step's fresh batch, before the update.

    Attributes:
        loss: cross-entropy of each run.
        accuracy: share of the batch answered correctly.
        attention_on_answer: mean attention weight on the pair that holds the answer.
        max_weight: mean over the batch of each attention row's largest weight
            (1/P for uniform attention, 1 for one-hot).
        saturated: share of the batch's attention rows whose largest weight is >= 0.99.
        logit_std: standard deviation of the attention logits ``scale · q·k``
            over the batch's B·P of them (Bessel-corrected, as ``Tensor.std``).
        temperature: the factor ``e^τ`` of a learnable temperature (see
            ``learn_temperature`` in :func:`train_recall_runs`) on top of the scale;
            1 for a run that learns none (``None`` in a history built by hand).
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

    Entry ``r`` of every tensor is bit-identical to the parameter of
    ``RecallModel(n_keys, n_values, d_model, d_k, qk_gain=qk_gain)`` built right
    after ``torch.manual_seed(seeds[r])``, which is what :func:`train_recall`
    trains. The scale has no parameters, so it plays no part here. One model is
    built per distinct seed, inside :func:`torch.random.fork_rng`: the caller's
    global random state is left as it was.

    Args:
        seeds: R seeds, ints >= 0; repeats are allowed.
        n_keys, n_values, d_model, d_k, qk_gain: as in :class:`RecallModel`.
        device: where the returned tensors live (default: the CPU).

    Returns:
        ``RecallModel``'s ``state_dict`` names mapped to (R, *shape) float32 tensors:
        ``key_embedding.weight`` (R, n_keys, D), ``value_embedding.weight``
        (R, n_values, D), ``w_q.weight`` and ``w_k.weight`` (R, d_k, D),
        ``w_v.weight`` (R, D, D), ``readout.weight`` (R, n_values, D),
        ``readout.bias`` (R, n_values).
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

    Run ``r`` is ``train_recall(scales[r], optimizer, lrs[r], seeds[r], steps, ...,
    d_k=d_k[r], qk_gain=qk_gain[r])``: the same initial parameters
    (:func:`init_recall_runs`), the same batches (one CPU generator per distinct
    seed, so runs that share a seed share every batch) and the same update rule
    (plain SGD, or Adam with torch's defaults, as ``torch.optim.Adam(fused=True)``
    computes it), evaluated in another order (see the module docstring), so its
    curves match the single run's up to float32 rounding. The runs share nothing:
    a run that diverges to NaN or inf leaves every other run's history unchanged.

    Runs of one ``d_k`` are stacked together; runs of several widths (``d_k`` a
    sequence) train in the same step loop, one stack per width, on the same batches.

    A run may also learn a temperature: a scalar ``τ`` of its own, starting at 0,
    that multiplies its attention logits by ``e^τ`` on top of its scale and is
    trained with the other parameters, by the same optimizer at the same learning
    rate (its gradient is ``Σ z ∂L/∂z`` over the run's logits ``z``). It has no
    single-run counterpart in :func:`train_recall`. A run that learns none keeps
    ``τ = 0`` exactly (its gradient is zeroed), and a stack in which no run learns
    one skips it, so such runs are bit-identical to the same runs without the option.

    Speed: a run costs about a sixth of the multiply–adds of :func:`train_recall`
    and none of its per-step Python overhead. On a busy two-core machine call it
    under ``torch.set_num_threads(1)``: these matmuls are small, and a second
    thread mostly waits for the other, busy core (measured: several times slower).

    Args:
        scales: R multipliers of the attention logits; ``None`` means ``1 / sqrt(d_k)`` of that run.
        lrs: R learning rates, finite and > 0.
        seeds: R seeds (ints >= 0) of the parameters and the data.
        optimizer: ``"adam"`` or ``"sgd"``, for every run.
        steps, batch_size, n_pairs, n_keys, n_values, d_model: as in :func:`train_recall`.
        d_k: the width of queries and keys: one int for every run, or R of them.
        qk_gain: the factor of the initial ``W_q`` and ``W_k`` (:class:`RecallModel`): one
            number for every run, or R of them.
        device: where to compute (default: the CPU); the data are drawn on the CPU
            and moved there.
        learn_temperature: whether each run learns a temperature ``e^τ`` (see
            above): one bool for every run, or R of them.

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
            _RunStack(
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


_NAMES = ("embedding", "w_q", "w_k", "w_v", "readout.weight", "readout.bias")  # the stacked parameters, in order


class _RunStack:
    """The runs of one d_k: parameters, gradients and optimizer state, stacked along a run axis.

    Each parameter is a contiguous (R, ...) block of one flat buffer, so the
    batched matrix products read and write it in place. ``embedding`` is E, the
    key embeddings stacked on the value embeddings (R, V, D); the others are
    ``RecallModel``'s (``w_q`` (R, d_k, D), ``w_k``, ``w_v`` (R, D, D),
    ``readout.weight`` (R, n_values, D), ``readout.bias`` (R, n_values)).
    """

    def __init__(
        self,
        runs: list[int],
        states: list[dict[str, Tensor]],
        scales: list[float],
        lrs: list[float],
        seed_slots: list[int],
        optimizer: str,
        steps: int,
        device: torch.device,
        learns: list[bool],
    ) -> None:
        self.runs = runs  # the indices of these runs in the caller's order
        first = states[0]
        self.n_keys = first["key_embedding.weight"].shape[0]
        shapes = {
            "embedding": (self.n_keys + first["value_embedding.weight"].shape[0], first["w_v.weight"].shape[0]),
            **{name: tuple(first[f"{name}.weight" if name.startswith("w_") else name].shape) for name in _NAMES[1:]},
        }
        count = len(runs)
        self.flat = torch.empty(count * sum(math.prod(shape) for shape in shapes.values()), device=device)
        self.grad_flat = torch.zeros_like(self.flat)
        self.params, self.grads = _blocks(self.flat, shapes, count), _blocks(self.grad_flat, shapes, count)
        for name, block in self.params.items():
            if name == "embedding":
                rows = [torch.cat([s["key_embedding.weight"], s["value_embedding.weight"]]) for s in states]
            else:
                rows = [s[f"{name}.weight" if name.startswith("w_") else name] for s in states]
            block.copy_(torch.stack(rows))
        # What multiplies u·e_key + u·e_value: the run's scale and the 1/sqrt(2) of the memory rows.
        self.factor = (torch.tensor(scales) / math.sqrt(2.0)).to(device).view(-1, 1, 1)
        self.slot = torch.tensor(seed_slots, device=device)  # run -> the batch of its seed
        # τ of each run's learnable temperature, and 1 where a run learns one (0: its gradient is zeroed, τ stays
        # 0); a stack in which no run learns one leaves τ out of every computation
        self.learns = any(learns)
        self.tau, self.g_tau = torch.zeros(count, device=device), torch.zeros(count, device=device)
        self.learning = torch.tensor(learns, dtype=torch.float32, device=device)
        leaves = list(self.params.values()) + ([self.tau] if self.learns else [])
        self.update = (_StackedAdam if optimizer == "adam" else _StackedSGD)(leaves, lrs)
        self.record = torch.empty(7, count, steps, device=device)  # one column per step; no host sync in the loop

    def step(self, batch: RecallBatch, step: int) -> None:
        """Train every run one step on its seed's batch (fields (S, B, ...)), and record the step."""
        batch = RecallBatch(*(field[self.slot] for field in batch))  # (R, B, ...)
        temperature = self.tau.exp()  # (R,): exactly 1 for a run that learns none
        if self.learns:
            factor = self.factor * temperature.view(-1, 1, 1)
            loss, logits, weights, attention_logits = _recall_runs_step(
                self.params, self.grads, batch, factor, self.g_tau
            )
            self.g_tau.mul_(self.learning)
            self.update.step([*self.grads.values(), self.g_tau])
        else:
            loss, logits, weights, attention_logits = _recall_runs_step(self.params, self.grads, batch, self.factor)
            self.update.step(list(self.grads.values()))
        largest = weights.amax(dim=-1)  # (R, B)
        self.record[:, :, step] = torch.stack(
            [
                loss,
                (logits.argmax(dim=-1) == batch.target).float().mean(dim=1),
                weights.gather(2, batch.position[..., None]).mean(dim=(1, 2)),
                largest.mean(dim=1),
                (largest >= _SATURATED).float().mean(dim=1),
                attention_logits.flatten(1).std(dim=1),
                temperature,
            ]
        )


def _blocks(flat: Tensor, shapes: dict[str, tuple[int, ...]], count: int) -> dict[str, Tensor]:
    """``flat`` cut into one contiguous (count, *shape) block per name, in order."""
    blocks, start = {}, 0
    for name, shape in shapes.items():
        size = count * math.prod(shape)
        blocks[name] = flat[start : start + size].view(count, *shape)
        start += size
    return blocks


@torch.no_grad()
def _recall_runs_step(
    params: dict[str, Tensor],
    grads: dict[str, Tensor],
    batch: RecallBatch,
    factor: Tensor,
    g_tau: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One forward and one backward pass of R runs, in the order of the module docstring.

    Writes into ``grads`` the gradient of each run's mean cross-entropy with
    respect to its own parameters (the runs share nothing), by the chain rule
    written out, matrix product by matrix product, in reverse.

    Args:
        params, grads: the stacked parameters and their gradients (:class:`_RunStack`).
        batch: a :class:`RecallBatch` whose fields have a leading run axis: (R, B, P) and (R, B).
        factor: (R, 1, 1) each run's scale divided by sqrt(2) (times its temperature e^τ).
        g_tau: where given, (R,) receives d loss / d τ = Σ z · d loss / d z over each run's
            attention logits z (z is proportional to e^τ).

    Returns:
        ``(loss, logits, weights, attention_logits)``: the mean cross-entropy (R,), the class
        logits (R, B, n_values), the attention weights (R, B, P) and logits ``scale · q·k`` (R, B, P).
    """
    E, w_q, w_k, w_v, w_o, b_o = (params[name] for name in _NAMES)
    g_E, g_w_q, g_w_k, g_w_v, g_w_o, g_b_o = (grads[name] for name in _NAMES)
    runs, vocabulary, d_model = E.shape
    n_pairs, batch_size, root2 = batch.pair_keys.shape[2], batch.pair_keys.shape[1], math.sqrt(2.0)
    n_keys = vocabulary - w_o.shape[1]
    # Forward. The query keys' rows of E, with E viewed as one (R·V, D) table.
    rows = (batch.query + vocabulary * torch.arange(runs, device=E.device)[:, None]).flatten()  # (R·B,)
    x = F.embedding(rows, E.view(runs * vocabulary, d_model)).view(runs, batch_size, d_model)  # (R, B, D)
    q = x @ w_q.mT  # (R, B, d_k)
    u = q @ w_k  # (R, B, D): W_kᵀ q, so that q·(W_k m) = u·m for any memory row m
    s = u @ E.mT  # (R, B, V): u·e for every key and every value
    index = torch.cat([batch.pair_keys, n_keys + batch.pair_values], dim=2)  # (R, B, 2P): the rows of each pair
    pair = s.gather(2, index)
    attention_logits = (pair[..., :n_pairs] + pair[..., n_pairs:]) * factor  # scale · q·k: the scale acts here
    weights = attention_logits.softmax(dim=-1)  # (R, B, P)
    # Σ_p w_p m_p with m_p = (e_key + e_value)/sqrt(2): each pair's weight on its two rows of E
    mass = torch.zeros_like(s).scatter_add_(2, index, (weights / root2).repeat(1, 1, 2))  # (R, B, V)
    mixed = mass @ E  # (R, B, D)
    output = mixed @ w_v.mT
    logits = torch.baddbmm(b_o[:, None, :], output, w_o.mT)  # (R, B, n_values)
    log_p = logits.log_softmax(dim=-1)
    loss = -log_p.gather(2, batch.target[..., None]).mean(dim=(1, 2))  # (R,)

    # Backward, from d loss / d logits = (softmax - onehot(target)) / B.
    g_logits = log_p.exp().scatter_add_(2, batch.target[..., None], torch.full_like(log_p[..., :1], -1.0))
    g_logits /= batch_size
    torch.sum(g_logits, dim=1, out=g_b_o)
    torch.bmm(g_logits.mT, output, out=g_w_o)
    g_output = g_logits @ w_o  # (R, B, D)
    torch.bmm(g_output.mT, mixed, out=g_w_v)
    g_mixed = g_output @ w_v  # (R, B, D)
    torch.bmm(mass.mT, g_mixed, out=g_E)  # E's gradient through the values ...
    g_mass = (g_mixed @ E.mT).gather(2, index) / root2  # (R, B, 2P)
    g_weights = g_mass[..., :n_pairs] + g_mass[..., n_pairs:]  # (R, B, P)
    # through the softmax (helpers.softmax_backward), then the scale
    g_z = weights * (g_weights - (weights * g_weights).sum(dim=-1, keepdim=True))  # d loss / d attention_logits
    if g_tau is not None:
        torch.sum(g_z * attention_logits, dim=(1, 2), out=g_tau)
    g_logit = g_z * factor
    g_s = torch.zeros_like(s).scatter_add_(2, index, g_logit.repeat(1, 1, 2))  # (R, B, V)
    g_E.baddbmm_(g_s.mT, u)  # ... through the keys ...
    g_u = g_s @ E
    torch.bmm(q.mT, g_u, out=g_w_k)
    g_q = g_u @ w_k.mT  # (R, B, d_k)
    torch.bmm(g_q.mT, x, out=g_w_q)
    g_E.view(runs * vocabulary, d_model).index_add_(0, rows, (g_q @ w_q).view(-1, d_model))  # ... and the queries
    return loss, logits, weights, attention_logits


def _equal_lr_blocks(lrs: list[float]) -> list[tuple[float, slice]]:
    """The runs cut into blocks of consecutive runs with the same learning rate."""
    blocks, start = [], 0
    for end in range(1, len(lrs) + 1):
        if end == len(lrs) or lrs[end] != lrs[start]:
            blocks.append((lrs[start], slice(start, end)))
            start = end
    return blocks


class _StackedSGD:
    """``torch.optim.SGD`` (no momentum) on stacked parameters, with one learning rate per run.

    Each block of runs that share a rate is updated with torch's own operation,
    ``param.add_(grad, alpha=-lr)``: bit for bit what ``torch.optim.SGD`` computes.
    """

    def __init__(self, params: list[Tensor], lrs: list[float]) -> None:
        self.params, self.blocks = params, _equal_lr_blocks(lrs)

    def step(self, grads: list[Tensor]) -> None:
        for lr, runs in self.blocks:
            for p, g in zip(self.params, grads, strict=True):
                p[runs].add_(g[runs], alpha=-lr)


class _StackedAdam:
    """``torch.optim.Adam(fused=True)`` (its defaults) on stacked parameters, with one learning rate per run.

    Each block of runs that share a rate is updated by torch's fused Adam kernel,
    the one ``torch.optim.Adam(fused=True)`` calls, with the same arguments: bit
    for bit its update. One pass over the parameters instead of seven.
    """

    def __init__(self, params: list[Tensor], lrs: list[float]) -> None:
        self.params, self.blocks = params, _equal_lr_blocks(lrs)
        self.exp_avg = [torch.zeros_like(p) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in params]
        self.t = torch.zeros((), device=params[0].device)  # the step count, shared by every run

    def step(self, grads: list[Tensor]) -> None:
        beta1, beta2 = _ADAM_BETAS
        self.t += 1
        for lr, runs in self.blocks:
            torch._fused_adam_(
                [p[runs] for p in self.params],
                [g[runs] for g in grads],
                [m[runs] for m in self.exp_avg],
                [v[runs] for v in self.exp_avg_sq],
                [],
                [self.t] * len(self.params),
                lr=lr,
                beta1=beta1,
                beta2=beta2,
                weight_decay=0.0,
                eps=_ADAM_EPS,
                amsgrad=False,
                maximize=False,
            )
