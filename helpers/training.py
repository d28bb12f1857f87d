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
A chapter's grid (seeds × learning rates × scales) is R independent runs of
the model above. :func:`train_recall_runs` trains them together: every
parameter gets a leading run axis, e.g. ``w_q`` (R, d_k, D); each step is one
batched forward pass, one backward pass of the *summed* loss (the runs share
no parameter, so each gets exactly its own gradient) and one optimizer update
with a learning rate per run. Run ``r`` starts from the parameters and sees
the batches that ``train_recall(seed=seeds[r])`` would. With ``E`` the key
embeddings stacked on the value embeddings, (R, V, D) with ``V = n_keys +
n_values`` (row ``n_keys + j`` is value ``j``), the forward pass computes the
model's function in a cheaper order::

    q       = W_q key_embedding[query]                         # (R, B, d_k)
    u       = W_kᵀ q                                           # (R, B, D)   q·(W_k m) = (W_kᵀ q)·m
    s       = u Eᵀ                                             # (R, B, V)   u·e for every row e of E
    scores  = scale · (s[pair_key] + s[n_keys + pair_value]) / sqrt(2)     # (R, B, P) = scale · q·k
    weights = softmax(scores)                                  # (R, B, P)
    mass    = Σ_p weights_p (onehot(pair_key_p) + onehot(n_keys + pair_value_p))   # (R, B, V)
    output  = W_v (mass E) / sqrt(2)                           # (R, B, D)   = Σ_p weights_p W_v m_p
    logits  = readout(output)                                  # (R, B, n_values)

The model multiplies all P memory rows of an example by ``W_k`` and by
``W_v``; by linearity this order multiplies one vector per example each way
and compares it with the V rows of E instead: six times fewer multiply–adds
at the book's sizes (P = 16, D = d_k = 64, V = 64), and about six times faster
than ``torch.func.vmap`` over :class:`RecallModel`. The float32 results differ
from the single run's in the last bits only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
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
    """

    def __init__(
        self, n_keys: int = 32, n_values: int = 32, d_model: int = 64, d_k: int = 64, scale: float | None = None
    ) -> None:
        super().__init__()
        check.positive_ints(n_keys=n_keys, n_values=n_values, d_model=d_model, d_k=d_k)
        self.scale = check.optional_scale("scale", scale)
        self.d_k = d_k
        self.key_embedding = nn.Embedding(n_keys, d_model)  # N(0, 1) by default
        self.value_embedding = nn.Embedding(n_values, d_model)
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.readout = nn.Linear(d_model, n_values)
        for layer in (self.w_q, self.w_k):  # unit-variance queries and keys at initialisation
            nn.init.normal_(layer.weight, std=1.0 / math.sqrt(d_model))

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

    Returns:
        The :class:`TrainHistory` of the run.
    """
    check.one_of("optimizer", optimizer, _OPTIMIZERS)
    check.positive_real("lr", lr)
    torch.manual_seed(effective_seed(seed))
    model = RecallModel(n_keys, n_values, d_model, d_k, scale)
    if device is not None:
        model = model.to(device)
    opt_class = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = opt_class(model.parameters(), lr=lr)
    return train(model, opt, steps, batch_size, n_pairs, seed=seed, device=device)


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
            1 for a run that learns none. ``None`` where the history was built without it.
    """

    loss: Tensor
    accuracy: Tensor
    attention_on_answer: Tensor
    max_weight: Tensor
    saturated: Tensor
    logit_std: Tensor
    temperature: Tensor | None = None

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
    device: torch.device | str | None = None,
) -> dict[str, Tensor]:
    """The initial parameters of R runs, stacked along a leading run axis.

    Entry ``r`` of every tensor is bit-identical to the parameter of
    ``RecallModel(n_keys, n_values, d_model, d_k)`` built right after
    ``torch.manual_seed(seeds[r])``, which is what :func:`train_recall` trains.
    The scale has no parameters, so it plays no part here. One model is built per
    distinct seed, inside :func:`torch.random.fork_rng`: the caller's global
    random state is left as it was.

    Args:
        seeds: R seeds, ints >= 0; repeats are allowed.
        n_keys, n_values, d_model, d_k: as in :class:`RecallModel`.
        device: where the returned tensors live (default: the CPU).

    Returns:
        ``RecallModel``'s ``state_dict`` names mapped to (R, *shape) float32 tensors:
        ``key_embedding.weight`` (R, n_keys, D), ``value_embedding.weight``
        (R, n_values, D), ``w_q.weight`` and ``w_k.weight`` (R, d_k, D),
        ``w_v.weight`` (R, D, D), ``readout.weight`` (R, n_values, D),
        ``readout.bias`` (R, n_values).
    """
    return _init_recall_runs(check.each("seeds", seeds, check.seed), n_keys, n_values, d_model, d_k, device)


def _init_recall_runs(
    seeds: list[int], n_keys: int, n_values: int, d_model: int, d_k: int, device: torch.device | str | None
) -> dict[str, Tensor]:
    """:func:`init_recall_runs` without the checks (:func:`train_recall_runs` has made them)."""
    states = {}
    with torch.random.fork_rng(devices=[]):
        for seed in dict.fromkeys(seeds):  # distinct seeds, in order of appearance
            torch.manual_seed(effective_seed(seed))
            states[seed] = RecallModel(n_keys, n_values, d_model, d_k).state_dict()
    return {name: torch.stack([states[seed][name] for seed in seeds]).to(device) for name in states[seeds[0]]}


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
    d_k: int = 64,
    device: torch.device | str | None = None,
    learn_temperature: bool | Iterable[bool] = False,
) -> RunsHistory:
    """Train R independent runs of :func:`train_recall` at once, as one batched program.

    Run ``r`` is ``train_recall(scales[r], optimizer, lrs[r], seeds[r], steps, ...)``:
    the same initial parameters (:func:`init_recall_runs`), the same batches (one
    CPU generator per distinct seed, so runs that share a seed share every batch)
    and the same update rule (plain SGD, or Adam with torch's defaults), evaluated
    in another order (see the module docstring), so its curves match the single
    run's up to float32 rounding. The runs share nothing: a run that diverges to
    NaN or inf leaves every other run's history unchanged.

    A run may also learn a temperature: a scalar ``τ`` of its own, starting at 0,
    that multiplies its attention logits by ``e^τ`` on top of its scale and is
    trained with the other parameters, by the same optimizer at the same learning
    rate. It has no single-run counterpart in :func:`train_recall`. A run that
    learns none keeps ``τ = 0`` exactly (its gradient is zeroed), so its history
    is bit-identical to the same run in a grid without learnable temperatures.

    Speed: a run costs about a sixth of the multiply–adds of :func:`train_recall`
    and none of its per-step Python overhead. On a busy two-core machine call it
    under ``torch.set_num_threads(1)``: these matmuls are small, and a second
    thread mostly waits for the other, busy core (measured: several times slower).

    Args:
        scales: R multipliers of the attention logits; ``None`` means ``1 / sqrt(d_k)``.
        lrs: R learning rates, finite and > 0.
        seeds: R seeds (ints >= 0) of the parameters and the data.
        optimizer: ``"adam"`` or ``"sgd"``, for every run.
        steps, batch_size, n_pairs, n_keys, n_values, d_model, d_k: as in :func:`train_recall`.
        device: where to compute (default: the CPU); the data are drawn on the CPU
            and moved there.
        learn_temperature: whether each run learns a temperature ``e^τ`` (see
            above): one bool for every run, or R of them.

    Returns:
        A :class:`RunsHistory` of (R, steps) float32 CPU tensors.
    """
    scales = check.each("scales", scales, check.optional_scale)
    lrs = check.each("lrs", lrs, check.positive_real)
    seeds = check.each("seeds", seeds, check.seed)
    learns = (
        [check.boolean("learn_temperature", learn_temperature)] * len(seeds)
        if isinstance(learn_temperature, bool)
        else check.each("learn_temperature", learn_temperature, check.boolean)
    )
    check.same_length("run", scales=scales, lrs=lrs, seeds=seeds, learn_temperature=learns)
    check.one_of("optimizer", optimizer, _OPTIMIZERS)
    check.positive_ints(
        steps=steps, batch_size=batch_size, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values, d_model=d_model, d_k=d_k
    )
    check.at_most("n_pairs", n_pairs, "n_keys", n_keys, "keys are distinct within an example")
    device = torch.device("cpu" if device is None else device)

    params = _init_recall_runs(seeds, n_keys, n_values, d_model, d_k, device)
    leaves = [tensor.requires_grad_() for tensor in params.values()]
    # τ of each run's learnable temperature, and 1 where a run learns one (0: its gradient is zeroed, τ stays 0)
    tau = torch.zeros(len(seeds), device=device, requires_grad=True)
    learning = torch.tensor(learns, dtype=torch.float32).to(device)
    if any(learns):
        leaves.append(tau)
    update = (_StackedAdam if optimizer == "adam" else _StackedSGD)(leaves, lrs, steps)
    # What multiplies u·e_key + u·e_value in the forward pass: the run's scale and the 1/sqrt(2) of the memory rows.
    factor = torch.tensor([(1.0 / math.sqrt(d_k) if c is None else c) / math.sqrt(2.0) for c in scales])
    factor = factor.to(device).view(-1, 1, 1)

    distinct = list(dict.fromkeys(seeds))
    generators = [torch.Generator().manual_seed(effective_seed(seed)) for seed in distinct]
    slot = torch.tensor([distinct.index(seed) for seed in seeds], device=device)  # (R,) run -> its seed's batch
    runs = len(seeds)
    record = torch.empty(7, runs, steps, device=device)  # one column per step; no host sync inside the loop
    for step in range(steps):
        per_seed = [_draw_recall_batch(batch_size, n_pairs, n_keys, n_values, g) for g in generators]
        fields = zip(*per_seed, strict=True)  # each field's batches, one per distinct seed
        batch = RecallBatch(*(torch.stack(field).to(device)[slot] for field in fields))  # (R, B, ...)
        temperature = tau.exp()  # (R,): exactly 1 for a run that learns none
        run_factor = factor * temperature.view(-1, 1, 1) if any(learns) else factor
        logits, weights, attention_logits = _recall_runs_forward(params, batch, run_factor)
        # Each run's mean cross-entropy; their sum has gradient 1 with respect to each, so
        # every run gets exactly its own gradient, whatever the others' values (even NaN).
        loss = F.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), reduction="none").view(runs, -1).mean(1)
        grads = torch.autograd.grad(loss.sum(), leaves)
        if any(learns):
            grads = (*grads[:-1], torch.where(learning > 0, grads[-1], 0.0))
        with torch.no_grad():
            update.step(grads)
            largest = weights.amax(dim=-1)  # (R, B)
            record[:, :, step] = torch.stack(
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
    return RunsHistory(*record.cpu().unbind(0))


def _recall_runs_forward(
    params: dict[str, Tensor], batch: RecallBatch, factor: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """:class:`RecallModel`'s forward pass for R runs at once, in the order of the module docstring.

    Args:
        params: the stacked parameters (see :func:`init_recall_runs`).
        batch: a :class:`RecallBatch` whose fields have a leading run axis: (R, B, P) and (R, B).
        factor: (R, 1, 1) each run's scale divided by sqrt(2).

    Returns:
        ``(logits, weights, attention_logits)``: class logits (R, B, n_values), the
        attention weights (R, B, P) and the attention logits ``scale · q·k`` (R, B, P).
    """
    key_embedding = params["key_embedding.weight"]
    runs, n_keys, d_model = key_embedding.shape
    E = torch.cat([key_embedding, params["value_embedding.weight"]], dim=1)  # (R, V, D)
    # the query keys' rows, with key_embedding viewed as one (R·n_keys, D) table
    rows = batch.query + n_keys * torch.arange(runs, device=E.device)[:, None]  # (R, B)
    q = F.embedding(rows, key_embedding.view(runs * n_keys, d_model)) @ params["w_q.weight"].mT  # (R, B, d_k)
    u = q @ params["w_k.weight"]  # (R, B, D): W_kᵀ q, so that q·(W_k m) = u·m for any memory row m
    s = u @ E.mT  # (R, B, V): u·e for every key and every value
    index = torch.cat([batch.pair_keys, n_keys + batch.pair_values], dim=2)  # (R, B, 2P): the rows of each pair
    pair = s.gather(2, index)
    n_pairs = batch.pair_keys.shape[2]
    attention_logits = (pair[..., :n_pairs] + pair[..., n_pairs:]) * factor  # scale · q·k: the scale acts here
    weights = attention_logits.softmax(dim=-1)  # (R, B, P)
    # Σ_p w_p W_v m_p = W_v Σ_p w_p m_p: put each pair's weight on its key row and its value row of E ...
    mass = torch.zeros_like(s).scatter_add(2, index, torch.cat([weights, weights], dim=2))  # (R, B, V)
    mixed = (mass @ E) / math.sqrt(2.0)  # (R, B, D): the attention-weighted memory row
    output = mixed @ params["w_v.weight"].mT  # ... and project once
    logits = torch.baddbmm(params["readout.bias"][:, None, :], output, params["readout.weight"].mT)
    return logits, weights, attention_logits


def _per_run(values: Tensor, like: Tensor) -> Tensor:
    """(R,) values viewed as (R, 1, ..., 1), to broadcast against a stacked parameter ``like``."""
    return values.view(-1, *(1,) * (like.dim() - 1))


class _StackedSGD:
    """``torch.optim.SGD`` (no momentum) on stacked parameters, with one learning rate per run."""

    def __init__(self, params: list[Tensor], lrs: list[float], steps: int) -> None:  # steps: unused, as Adam's
        self.params = params
        # torch applies alpha = -lr as a float32 scalar: param + (-lr)·grad in one fused multiply-add,
        # which is what addcmul_ computes too.
        self.neg_lr = torch.tensor([-lr for lr in lrs], dtype=torch.float32).to(params[0].device)

    def step(self, grads: tuple[Tensor, ...]) -> None:
        for p, g in zip(self.params, grads, strict=True):
            p.addcmul_(g, _per_run(self.neg_lr, p))


class _StackedAdam:
    """``torch.optim.Adam`` (its defaults) on stacked parameters, with one learning rate per run.

    The elementwise operations are those of torch's single-tensor Adam, in its
    order, so that a run's update equals torch's for the same gradient, bit for
    bit. The step count, hence the bias corrections, is shared by all runs; only
    the step size ``lr / (1 - beta1^t)`` differs: computed in float64 like torch's
    Python floats, rounded once to float32 as torch rounds the ``value`` of addcdiv_.
    """

    def __init__(self, params: list[Tensor], lrs: list[float], steps: int) -> None:
        beta1, _ = _ADAM_BETAS
        self.params = params
        self.exp_avg = [torch.zeros_like(p) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in params]
        self.denom = [torch.empty_like(p) for p in params]  # scratch, reused every step: no allocations
        self.update = [torch.empty_like(p) for p in params]
        self.t = 0
        # (steps, R): -lr / (1 - beta1^t) at every step, made on the CPU (MPS has no float64) and moved once.
        bias_correction1 = torch.tensor([1 - beta1 ** float(t) for t in range(1, steps + 1)], dtype=torch.float64)
        lr = torch.tensor(lrs, dtype=torch.float64)
        self.neg_step_size = (-(lr / bias_correction1[:, None])).to(torch.float32).to(params[0].device)

    def step(self, grads: tuple[Tensor, ...]) -> None:
        beta1, beta2 = _ADAM_BETAS
        self.t += 1
        bias_correction2_sqrt = (1 - beta2 ** float(self.t)) ** 0.5
        neg_step_size = self.neg_step_size[self.t - 1]  # (R,)
        state = zip(self.params, grads, self.exp_avg, self.exp_avg_sq, self.denom, self.update, strict=True)
        for p, g, m, v, denom, update in state:
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            torch.sqrt(v, out=denom).div_(bias_correction2_sqrt).add_(_ADAM_EPS)
            # torch: p.addcdiv_(m, denom, value=-step_size), i.e. p + ((-step_size)·m) / denom
            p.addcdiv_(torch.mul(m, _per_run(neg_step_size, p), out=update), denom)
