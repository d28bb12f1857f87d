"""Rules that recent models apply to the attention logits besides the scale: QK-norm, measured on the recall task.

:func:`qk_norm` is the per-head RMSNorm with a learned gain that Qwen3 and Gemma 3 apply to queries
and keys before their product. :class:`QKNormRecallModel` is chapter 6's recall model
(:class:`helpers.RecallModel`) with that norm on ``q`` and ``k`` and the scale ``1/sqrt(d_k)`` kept on
top, as those models keep ``head_dim**-0.5``; with ``qk_norm=False`` it computes exactly what
``RecallModel`` computes. :func:`train_logit_rule` trains either on fresh recall batches, as
:func:`helpers.train_recall` does, and records the largest attention logit of each step's batch, which
:class:`helpers.TrainHistory` does not. :func:`train_cosine_runs` trains many runs of the same model with
cosine attention and a learned temperature instead of the scale (QK-norm as Henry et al. 2020 and Swin
Transformer V2 write it), stacked along a run axis, as :func:`helpers.train_recall_runs` does for the scale.
:class:`SinkRecallModel` adds a learned sink logit, a column the softmax sees and the values do not, as
gpt-oss does; :func:`train_sink` trains it on :func:`no_answer_batch`, recall with queries whose key is
absent, where the calibrated answer is a uniform guess.

Chapters: 8.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

import torch
from torch import Tensor, nn

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.recall_runs import RunsHistory, init_recall_runs
from helpers.run_stack import StackedAdam, step_statistics
from helpers.softmax import softmax_entropy
from helpers.training import RecallBatch, RecallModel, _draw_recall_batch

__all__ = [
    "LogitHistory",
    "NoAnswerBatch",
    "QKNormRecallModel",
    "SinkHistory",
    "SinkRecallModel",
    "no_answer_batch",
    "qk_norm",
    "train_cosine_runs",
    "train_logit_rule",
    "train_sink",
]

M = TypeVar("M", bound=nn.Module)

_RULES = ("sqrt", "qk-norm")  # 1/sqrt(d_k) alone; QK-norm with 1/sqrt(d_k) on top


def qk_norm(x: Tensor, gain: Tensor, eps: float = 1e-6) -> Tensor:
    """RMS-normalise the last dimension of ``x`` and multiply by a gain.

    ``x * gain / sqrt(mean(x**2) + eps)``: each vector gets root mean square ``|gain|`` (for a
    constant gain), so its norm is ``sqrt(d)`` times that, whatever its size before.

    Args:
        x: (..., d) queries or keys, floating point.
        gain: (d,) the learned gain, same dtype as ``x``.
        eps: added to the mean square, > 0.

    Returns:
        (..., d), the same shape and dtype as ``x``.
    """
    check.float_tensor("x", x, 1, "(..., d)")
    check.float_tensor("gain", gain, 1, "(d,)")
    check.dims("gain", gain, 1, "(d,)")
    check.shape("gain", gain, (x.shape[-1],), "(d,) with d = x.shape[-1]")
    check.same_dtype("gain", gain, "x", x)
    eps = check.positive_real("eps", eps)
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gain


class QKNormRecallModel(RecallModel):
    """:class:`helpers.RecallModel` with QK-norm on its queries and keys, and its scale kept.

    The parameters of ``RecallModel`` are drawn first, in the same order, so one seed gives both
    models the same ones; the gains ``q_gain`` and ``k_gain`` (d_k,) start at 1 and draw nothing.

    Args:
        n_keys, n_values, d_model, d_k: as in :class:`helpers.RecallModel`.
        qk_norm: apply :func:`qk_norm` to ``q`` and ``k`` before the product; ``False`` gives
            ``RecallModel``'s function exactly (the gains then get no gradient).
    """

    def __init__(
        self, n_keys: int = 32, n_values: int = 32, d_model: int = 64, d_k: int = 64, qk_norm: bool = True
    ) -> None:
        super().__init__(n_keys, n_values, d_model, d_k)
        self.qk_norm = check.boolean("qk_norm", qk_norm)
        self.q_gain = nn.Parameter(torch.ones(d_k))
        self.k_gain = nn.Parameter(torch.ones(d_k))

    def attention_logits(self, pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> Tensor:
        """The logits ``q · k / sqrt(d_k)`` of the query over the pairs.

        Args:
            pair_keys: (B, P) int64 keys.
            pair_values: (B, P) int64 values.
            query: (B,) int64 query keys.

        Returns:
            (B, P) float logits.
        """
        check.recall_inputs(pair_keys, pair_values, query)
        memory = self.memory(pair_keys, pair_values)
        q: Tensor = self.w_q(self.key_embedding(query))  # (B, d_k)
        k: Tensor = self.w_k(memory)  # (B, P, d_k)
        if self.qk_norm:
            q, k = qk_norm(q, self.q_gain), qk_norm(k, self.k_gain)
        return (k @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(self.d_k)

    def forward(self, pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> tuple[Tensor, Tensor]:
        """Answer the query: ``(logits, weights)``, class logits (B, n_values) and attention weights (B, P)."""
        return self.answer(self.attention_logits(pair_keys, pair_values, query), pair_keys, pair_values)

    def answer(self, z: Tensor, pair_keys: Tensor, pair_values: Tensor) -> tuple[Tensor, Tensor]:
        """The class logits (B, n_values) and the weights (B, P) from attention logits ``z`` (B, P)."""
        check.float_tensor("z", z, 2, "(B, P)")
        check.shape("z", z, tuple(pair_keys.shape), "(B, P), as pair_keys")
        weights = self.attention_weights(z)
        output = (weights.unsqueeze(1) @ self.w_v(self.memory(pair_keys, pair_values))).squeeze(1)  # (B, D)
        return self.readout(output), weights

    def attention_weights(self, z: Tensor) -> Tensor:
        """(B, P) the weights on the pairs from the logits ``z`` (B, P): the softmax of each row."""
        return z.softmax(dim=-1)


@dataclass
class LogitHistory:
    """What :func:`train_logit_rule` records at every step, on that step's fresh batch.

    Attributes:
        loss: cross-entropy per step.
        accuracy: share of the batch answered correctly per step.
        max_logit: the largest attention logit of the batch, per step.
        entropy: the mean entropy of the batch's attention rows, in nats, per step.
        gain_bound: ``sqrt(d_k) * max|q_gain| * max|k_gain|`` of the gains that made the step's logits, per
            step: under ``"qk-norm"`` no logit of that step exceeds it (eq-ch8-qk-bound); under ``"sqrt"``
            the gains are unused and it stays ``sqrt(d_k)``.
    """

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    max_logit: list[float] = field(default_factory=list)
    entropy: list[float] = field(default_factory=list)
    gain_bound: list[float] = field(default_factory=list)


def train_logit_rule(
    rule: str,
    lr: float,
    seed: int = 0,
    steps: int = 300,
    batch_size: int = 32,
    n_pairs: int = 16,
    d_k: int = 64,
    device: torch.device | str | None = None,
) -> LogitHistory:
    """Build a recall model from ``seed`` under ``rule``, train it with Adam, return its history.

    As :func:`helpers.train_recall` with ``optimizer="adam"``: the parameters are drawn after
    ``torch.manual_seed(effective_seed(seed))``, the batches come from a CPU generator seeded the same
    way (32 keys, 32 values, width 64), and each step is one ``torch.optim.Adam`` update (torch's
    defaults) on a fresh batch. The QK-norm gains are trained with the other parameters.

    Args:
        rule: ``"sqrt"`` (``1/sqrt(d_k)`` alone) or ``"qk-norm"`` (:func:`qk_norm`, then ``1/sqrt(d_k)``).
        lr: Adam's learning rate, > 0.
        seed: seeds the parameters and the data, an int >= 0.
        steps, batch_size, n_pairs: as in :func:`helpers.train`.
        d_k: the width of queries and keys.
        device: where to compute (default: the CPU).

    Returns:
        A :class:`LogitHistory` with one entry per step.
    """
    check.one_of("rule", rule, _RULES)
    lr = check.positive_real("lr", lr)
    seed = check.seed("seed", seed)
    check.positive_ints(steps=steps, batch_size=batch_size, n_pairs=n_pairs, d_k=d_k)
    check.at_most("n_pairs", n_pairs, "n_keys", 32, "keys are distinct within an example")
    model, optimizer, generator = _seeded_adam(
        lambda: QKNormRecallModel(d_k=d_k, qk_norm=rule == "qk-norm"), lr, seed, device
    )
    history = LogitHistory()
    for _ in range(steps):
        batch = _draw_recall_batch(batch_size, n_pairs, 32, 32, generator, device)
        z = model.attention_logits(batch.pair_keys, batch.pair_values, batch.query)  # (B, P)
        logits, weights = model.answer(z, batch.pair_keys, batch.pair_values)
        loss = nn.functional.cross_entropy(logits, batch.target)
        with torch.no_grad():  # the gains before this step's update: the ones that made z
            bound = math.sqrt(d_k) * model.q_gain.abs().max().item() * model.k_gain.abs().max().item()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # Tensor.backward is unannotated in torch
        optimizer.step()
        with torch.no_grad():
            history.loss.append(loss.item())
            history.accuracy.append((logits.argmax(-1) == batch.target).float().mean().item())
            history.max_logit.append(z.max().item())
            history.entropy.append(softmax_entropy(weights).mean().item())
            history.gain_bound.append(bound)
    return history


def _seeded_adam(
    build: Callable[[], M], lr: float, seed: int, device: torch.device | str | None
) -> tuple[M, torch.optim.Adam, torch.Generator]:
    """The model ``build()`` draws after ``torch.manual_seed(effective_seed(seed))``, on ``device``; its
    ``torch.optim.Adam`` (torch's defaults) at ``lr``; and the CPU data generator seeded the same way."""
    torch.manual_seed(effective_seed(seed))
    model = build()
    if device is not None:
        model = model.to(device)
    return model, torch.optim.Adam(model.parameters(), lr=lr), torch.Generator().manual_seed(effective_seed(seed))


def train_cosine_runs(
    lrs: list[float],
    seeds: list[int],
    d_k: int = 64,
    *,
    steps: int = 300,
    temperature_init: float = 10.0,
    temperature_cap: float = 100.0,
    device: torch.device | str | None = None,
) -> RunsHistory:
    """Train R recall models with cosine attention and a learned temperature, with Adam, as one batched program.

    Run ``r`` is chapter 6's recall model (the parameters :func:`helpers.init_recall_runs` draws from
    ``seeds[r]``, the batches of ``train_recall(seed=seeds[r])``) with its logits ``q · k / sqrt(d_k)``
    replaced by ``t · cos(q, k)``: ``q`` and ``k`` divided by their Euclidean norms, no ``1/sqrt(d_k)``,
    and ``t = exp(min(τ, ln temperature_cap))`` with a learned scalar ``τ`` starting at
    ``ln temperature_init``, as Swin Transformer V2 writes its per-head ``logit_scale`` (initialised at
    ``log(10)``, clamped at ``log(1 / 0.01)``; Liu et al. 2022), one form of the idea Henry et al. 2020 call
    QK-norm. Every parameter and ``τ`` are trained by Adam (torch's defaults, the fused kernel) at the
    run's rate; autograd computes the gradients of the stacked runs, which share nothing.

    Args:
        lrs: R learning rates, finite and > 0.
        seeds: R seeds (ints >= 0) of the parameters and the data.
        d_k: the width of queries and keys, for every run.
        steps: training steps, each on a fresh batch of 32 examples of 16 pairs.
        temperature_init: ``t`` at the start, > 0.
        temperature_cap: the largest ``t``, at least ``temperature_init``.
        device: where to compute (default: the CPU); the data are drawn on the CPU.

    Returns:
        A :class:`helpers.recall_runs.RunsHistory` of (R, steps) float32 CPU tensors, measured on each
        step's batch before its update; ``logit_std`` is the spread of ``t · cos(q, k)`` and
        ``temperature`` is ``t``.
    """
    lrs = check.each("lrs", lrs, check.positive_real)
    seeds = check.each("seeds", seeds, check.seed)
    check.same_length("run", lrs=lrs, seeds=seeds)
    check.positive_ints(d_k=d_k, steps=steps)
    temperature_init = check.positive_real("temperature_init", temperature_init)
    temperature_cap = check.real("temperature_cap", temperature_cap, temperature_init, math.inf)
    device = torch.device("cpu" if device is None else device)
    order = sorted(range(len(lrs)), key=lambda r: lrs[r])  # runs of one rate side by side: one Adam call each
    state = init_recall_runs([seeds[r] for r in order], d_k=d_k, device=device)
    params = [state[name].clone().requires_grad_() for name in _COSINE_NAMES]
    tau = torch.full((len(order),), math.log(temperature_init), device=device, requires_grad=True)
    update = StackedAdam([*params, tau], [lrs[r] for r in order])
    distinct = list(dict.fromkeys(seeds))
    generators = [torch.Generator().manual_seed(effective_seed(seed)) for seed in distinct]
    slot = torch.tensor([distinct.index(seeds[r]) for r in order], device=device)
    record = torch.empty(7, len(order), steps, device=device)
    for step in range(steps):
        per_seed = [_draw_recall_batch(32, 16, 32, 32, g) for g in generators]
        batch = RecallBatch(*(torch.stack(f).to(device)[slot] for f in zip(*per_seed, strict=True)))  # (R, B, ...)
        temperature = tau.clamp(max=math.log(temperature_cap)).exp()  # (R,)
        logits, weights, z = _cosine_forward(params, temperature, batch)
        losses = nn.functional.cross_entropy(logits.flatten(0, 1), batch.target.flatten(), reduction="none")
        loss = losses.view(len(order), -1).mean(dim=1)  # (R,)
        grads = torch.autograd.grad(loss.sum(), [*params, tau])  # the runs share nothing: one sum, R gradients
        with torch.no_grad():
            update.step([g.contiguous() for g in grads])  # the fused kernel reads memory in order: no strides
            record[:, :, step] = step_statistics(batch, loss, logits, weights, z, temperature)
    back = torch.empty_like(record, device="cpu")
    back[:, order] = record.cpu()  # the caller's order
    return RunsHistory(*back.unbind(0))


_COSINE_NAMES = (  # the stacked parameters, RecallModel's state_dict names
    "key_embedding.weight",
    "value_embedding.weight",
    "w_q.weight",
    "w_k.weight",
    "w_v.weight",
    "readout.weight",
    "readout.bias",
)


def _cosine_forward(params: list[Tensor], temperature: Tensor, batch: RecallBatch) -> tuple[Tensor, Tensor, Tensor]:
    """RecallModel's function for R stacked runs, with ``t · cos(q, k)`` as the attention logits.

    Args:
        params: the tensors of ``_COSINE_NAMES``, each (R, ...).
        temperature: (R,) each run's ``t``.
        batch: a :class:`RecallBatch` whose fields have a leading run axis: (R, B, P) and (R, B).

    Returns:
        ``(logits, weights, z)``: class logits (R, B, n_values), attention weights (R, B, P) and the
        attention logits ``z`` (R, B, P).
    """
    key_embedding, value_embedding, w_q, w_k, w_v, readout, bias = params
    runs, (batch_size, n_pairs) = key_embedding.shape[0], batch.pair_keys.shape[1:]
    run = torch.arange(runs, device=key_embedding.device)
    pairs = run[:, None, None]  # each run reads its own embeddings
    memory = (key_embedding[pairs, batch.pair_keys] + value_embedding[pairs, batch.pair_values]) / math.sqrt(2.0)
    flat = memory.flatten(1, 2)  # (R, B·P, D): one batched product per run, not one per example (twice as fast)
    q = key_embedding[run[:, None], batch.query] @ w_q.mT  # (R, B, d_k)
    k = (flat @ w_k.mT).view(runs, batch_size, n_pairs, -1)  # (R, B, P, d_k)
    cosine = (nn.functional.normalize(k, dim=-1) @ nn.functional.normalize(q, dim=-1).unsqueeze(-1)).squeeze(-1)
    z = temperature.view(-1, 1, 1) * cosine  # (R, B, P): no 1/sqrt(d_k); t does its work
    weights = z.softmax(dim=-1)
    values = (flat @ w_v.mT).view(runs, batch_size, n_pairs, -1)  # (R, B, P, D)
    output = (weights.unsqueeze(-2) @ values).squeeze(-2)  # (R, B, D)
    return output @ readout.mT + bias.unsqueeze(1), weights, z


# --- a sink logit, on recall with queries that have no answer ---------------------------------------


class NoAnswerBatch(NamedTuple):
    """A batch of recall in which some queries have no answer; every field is a tensor.

    Attributes:
        pair_keys: (B, P) int64 keys of the pairs, distinct within a row, in [0, n_keys).
        pair_values: (B, P) int64 values of the pairs, in [0, n_values).
        query: (B,) int64: one of the row's keys where ``answerable``, else a key the row does not hold.
        target: (B,) int64 the value paired with ``query``; -1 where the row has no answer.
        answerable: (B,) bool, whether ``query`` is among the row's keys.
    """

    pair_keys: Tensor
    pair_values: Tensor
    query: Tensor
    target: Tensor
    answerable: Tensor


def no_answer_batch(
    batch_size: int,
    n_pairs: int = 16,
    n_keys: int = 32,
    n_values: int = 32,
    no_answer_share: float = 0.5,
    *,
    generator: torch.Generator | None = None,
) -> NoAnswerBatch:
    """Draw recall examples of which about ``no_answer_share`` ask for a key that is not there.

    Each row's keys are the first ``n_pairs`` of a random permutation of the ``n_keys`` keys; its query
    is one of them (the target is its value) or, with probability ``no_answer_share``, one of the others.
    Nothing in the pairs then says which value is meant: every value is equally likely, so a calibrated
    model answers such a row with the uniform distribution over the ``n_values`` values.

    Args:
        batch_size: B, the number of examples.
        n_pairs: P, pairs per example, fewer than ``n_keys`` (an absent key must exist).
        n_keys, n_values: the sizes of the two vocabularies.
        no_answer_share: the probability that a row has no answer, in [0, 1].
        generator: a CPU ``torch.Generator``; ``None`` uses torch's global one.

    Returns:
        A :class:`NoAnswerBatch` on the CPU, shapes (B, P), (B, P), (B,), (B,), (B,).
    """
    check.positive_ints(batch_size=batch_size, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
    check.at_most("n_pairs", n_pairs, "n_keys - 1", n_keys - 1, "a query with no answer needs a key the row lacks")
    no_answer_share = check.real("no_answer_share", no_answer_share, 0.0, 1.0)
    check.instance("generator", generator, (torch.Generator, type(None)), "a torch.Generator or None")
    return _draw_no_answer_batch(batch_size, n_pairs, n_keys, n_values, no_answer_share, generator)


def _draw_no_answer_batch(
    batch_size: int, n_pairs: int, n_keys: int, n_values: int, share: float, generator: torch.Generator | None
) -> NoAnswerBatch:
    """:func:`no_answer_batch` without the checks, for the training loop."""
    keys = torch.rand(batch_size, n_keys, generator=generator).argsort(dim=-1)  # (B, n_keys), a permutation
    pair_values = torch.randint(0, n_values, (batch_size, n_pairs), generator=generator)
    position = torch.randint(0, n_pairs, (batch_size,), generator=generator)
    absent = torch.randint(n_pairs, n_keys, (batch_size,), generator=generator)  # a key after the row's pairs
    answerable = torch.rand(batch_size, generator=generator) >= share
    rows = torch.arange(batch_size)
    query = torch.where(answerable, keys[rows, position], keys[rows, absent])
    target = torch.where(answerable, pair_values[rows, position], -1)
    return NoAnswerBatch(keys[:, :n_pairs], pair_values, query, target, answerable)


class SinkRecallModel(QKNormRecallModel):
    """The recall model (its logits ``q · k / sqrt(d_k)``, no QK-norm) with a learned sink logit.

    The softmax runs over the row's ``P`` logits and one more, ``sink_logit``, a learned scalar that
    starts at 0; the sink's weight is then dropped, so the weights on the pairs sum to ``1 - sink weight``
    and a row can read almost nothing. This is gpt-oss's sink (``eager_attention_forward`` in
    ``models/gpt_oss/modeling_gpt_oss.py``, transformers v4.56.0: the per-head ``sinks`` concatenated to
    the logits before the softmax, sliced off after), for one head. With ``sink=False`` the model is
    :class:`QKNormRecallModel` with ``qk_norm=False``, which computes what :class:`helpers.RecallModel`
    does; the sink logit then gets no gradient. One seed draws the same parameters in both.

    Args:
        n_keys, n_values, d_model, d_k: as in :class:`helpers.RecallModel`.
        sink: whether the softmax sees the sink logit.
    """

    def __init__(self, n_keys: int = 32, n_values: int = 32, d_model: int = 64, d_k: int = 64, sink: bool = True):
        super().__init__(n_keys, n_values, d_model, d_k, qk_norm=False)
        self.sink = check.boolean("sink", sink)
        self.sink_logit = nn.Parameter(torch.zeros(()))

    def attention_weights(self, z: Tensor) -> Tensor:
        """(B, P) the weights on the pairs from the logits ``z`` (B, P); with the sink, a row's weights sum
        to less than 1: the rest went to the sink."""
        if not self.sink:
            return super().attention_weights(z)
        with_sink = torch.cat([z, self.sink_logit.expand(z.shape[0], 1)], dim=-1)  # (B, P + 1)
        return with_sink.softmax(dim=-1)[:, :-1]  # the sink's column dropped: it carries no value


@dataclass
class SinkHistory:
    """What :func:`train_sink` records at every step, on that step's fresh batch, before its update.

    Attributes:
        loss: the training loss per step (the mean over the batch's rows, see :func:`train_sink`).
        accuracy: share of the answerable rows answered correctly.
        no_answer_kl: mean over the rows with no answer of KL(uniform ‖ the model's answer), in nats:
            0 for the calibrated answer.
        sink_no_answer: mean weight the sink took in the rows with no answer (0 without a sink).
        sink_answerable: mean weight the sink took in the answerable rows.
        sink_logit: the sink logit that made the step's weights.
    """

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    no_answer_kl: list[float] = field(default_factory=list)
    sink_no_answer: list[float] = field(default_factory=list)
    sink_answerable: list[float] = field(default_factory=list)
    sink_logit: list[float] = field(default_factory=list)


def train_sink(
    sink: bool,
    lr: float,
    seed: int = 0,
    steps: int = 1000,
    no_answer_share: float = 0.5,
    d_k: int = 64,
    device: torch.device | str | None = None,
) -> SinkHistory:
    """Build a :class:`SinkRecallModel` from ``seed``, train it with Adam on no-answer recall, return its history.

    Each step draws a fresh :func:`no_answer_batch` of 32 rows of 16 pairs (32 keys, 32 values) from a
    CPU generator seeded with ``effective_seed(seed)``, after the parameters were drawn under
    ``torch.manual_seed(effective_seed(seed))``. The loss of a row is the cross-entropy against its
    target where it has one, and against the uniform distribution over the values where it has none
    (the calibrated answer: ``ln n_values`` plus KL(uniform ‖ answer)); the step's loss is their mean.
    One ``torch.optim.Adam`` update (torch's defaults) per step trains every parameter, the sink logit too.

    Args:
        sink: whether the model has the sink logit.
        lr: Adam's learning rate, > 0.
        seed: seeds the parameters and the data, an int >= 0.
        steps: the number of steps, > 0.
        no_answer_share: as in :func:`no_answer_batch`.
        d_k: the width of queries and keys.
        device: where to compute (default: the CPU); the data are drawn on the CPU.

    Returns:
        A :class:`SinkHistory` with one entry per step.
    """
    sink = check.boolean("sink", sink)
    lr = check.positive_real("lr", lr)
    seed = check.seed("seed", seed)
    check.positive_ints(steps=steps, d_k=d_k)
    no_answer_share = check.real("no_answer_share", no_answer_share, 0.0, 1.0)
    model, optimizer, generator = _seeded_adam(lambda: SinkRecallModel(d_k=d_k, sink=sink), lr, seed, device)
    history = SinkHistory()
    for _ in range(steps):
        batch = NoAnswerBatch(
            *(f.to(device) for f in _draw_no_answer_batch(32, 16, 32, 32, no_answer_share, generator))
        )
        z = model.attention_logits(batch.pair_keys, batch.pair_values, batch.query)  # (B, P)
        logits, weights = model.answer(z, batch.pair_keys, batch.pair_values)
        log_p = logits.log_softmax(dim=-1)  # (B, n_values)
        answered = -log_p.gather(1, batch.target.clamp(min=0)[:, None]).squeeze(1)  # (B,), used where answerable
        uniform = -log_p.mean(dim=-1)  # (B,) cross-entropy against the uniform answer
        loss = torch.where(batch.answerable, answered, uniform).mean()
        sink_logit = model.sink_logit.item() if sink else 0.0  # the logit that made these weights
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # Tensor.backward is unannotated in torch
        optimizer.step()
        with torch.no_grad():
            absorbed, some, none = 1.0 - weights.sum(dim=-1), batch.answerable, ~batch.answerable
            correct = logits.argmax(dim=-1) == batch.target
            history.loss.append(loss.item())
            history.accuracy.append(_mean(correct.float(), some))
            history.no_answer_kl.append(_mean(uniform - math.log(logits.shape[-1]), none))
            history.sink_no_answer.append(_mean(absorbed, none))
            history.sink_answerable.append(_mean(absorbed, some))
            history.sink_logit.append(sink_logit)
    return history


def _mean(values: Tensor, rows: Tensor) -> float:
    """The mean of ``values`` (B,) over the rows where ``rows`` (B,) is true; nan where there is none."""
    return values[rows].mean().item() if bool(rows.any()) else math.nan
