"""Rules that recent models apply to the attention logits besides the scale, measured on the recall task.

- :func:`qk_norm`: the per-head RMSNorm with a learned gain of Qwen3 and Gemma 3, on queries and keys;
  :class:`QKNormRecallModel` is chapter 6's recall model with it, ``1/sqrt(d_k)`` kept on top.
- :func:`train_logit_rule`: one run of either, recording the largest logit of each step's batch.
- :func:`train_cosine_runs`: many stacked runs with cosine attention and a learned temperature instead of the scale
  (Henry et al. 2020, Swin Transformer V2). The third rule, a learned sink logit, is in :mod:`helpers.sink`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.recall_runs import RunsHistory, init_recall_runs
from helpers.run_stack import StackedAdam, step_statistics
from helpers.training import RecallBatch, RecallModel, recall_batch, seeded

__all__ = ["LogitHistory", "QKNormRecallModel", "qk_norm", "train_cosine_runs", "train_logit_rule"]

_RULES = ("sqrt", "qk-norm")  # 1/sqrt(d_k) alone; QK-norm with 1/sqrt(d_k) on top


def qk_norm(x: Tensor, gain: Tensor, eps: float = 1e-6) -> Tensor:
    """``x * gain / sqrt(mean(x**2) + eps)`` over the last dimension of ``x`` (..., d), ``gain`` (d,): each vector
    gets root mean square ``|gain|`` (for a constant gain), whatever its size before. Returns (..., d)."""
    check.float_tensor("x", x, 1, "(..., d)")
    check.float_tensor("gain", gain, 1, "(d,)")
    check.shape("gain", gain, (x.shape[-1],), "(d,) with d = x.shape[-1]")
    check.like("gain", gain, "x", x)
    eps = check.positive_real("eps", eps)
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * gain


class QKNormRecallModel(RecallModel):
    """:class:`helpers.RecallModel` with :func:`qk_norm` on its queries and keys, and its scale kept.

    ``RecallModel``'s parameters are drawn first, so one seed gives both models the same ones; the gains ``q_gain``
    and ``k_gain`` (d_k,) start at 1 and draw nothing. ``qk_norm=False`` computes ``RecallModel``'s function.
    """

    def __init__(
        self, n_keys: int = 32, n_values: int = 32, d_model: int = 64, d_k: int = 64, qk_norm: bool = True
    ) -> None:
        super().__init__(n_keys, n_values, d_model, d_k)
        self.qk_norm = check.boolean("qk_norm", qk_norm)
        self.q_gain = nn.Parameter(torch.ones(d_k))
        self.k_gain = nn.Parameter(torch.ones(d_k))

    def attention_logits(self, pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> Tensor:
        """(B, P) the logits ``q · k / sqrt(d_k)`` of the query (B,) over the pairs (B, P)."""
        check.recall_inputs(pair_keys, pair_values, query)
        memory = self.memory(pair_keys, pair_values)
        q: Tensor = self.w_q(self.key_embedding(query))  # (B, d_k)
        k: Tensor = self.w_k(memory)  # (B, P, d_k)
        if self.qk_norm:
            q, k = qk_norm(q, self.q_gain), qk_norm(k, self.k_gain)
        return (k @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(self.d_k)

    def forward(self, pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> tuple[Tensor, Tensor]:
        """``(logits, weights)``: class logits (B, n_values) and attention weights (B, P)."""
        return self.answer(self.attention_logits(pair_keys, pair_values, query), pair_keys, pair_values)

    def answer(self, z: Tensor, pair_keys: Tensor, pair_values: Tensor) -> tuple[Tensor, Tensor]:
        """The class logits (B, n_values) and the weights (B, P) from attention logits ``z`` (B, P)."""
        check.float_tensor("z", z, 2, "(B, P)")
        check.shape("z", z, tuple(pair_keys.shape), "(B, P), as pair_keys")
        weights = self.attention_weights(z)
        output = (weights.unsqueeze(1) @ self.w_v(self.memory(pair_keys, pair_values))).squeeze(1)  # (B, D)
        return self.readout(output), weights

    def attention_weights(self, z: Tensor) -> Tensor:
        """(B, P) the weights from the logits ``z`` (B, P): the softmax of each row."""
        return z.softmax(dim=-1)


@dataclass
class LogitHistory:
    """What :func:`train_logit_rule` records at every step, on that step's fresh batch: ``loss``, ``accuracy``,
    the largest attention logit (``max_logit``) and ``gain_bound`` =
    ``sqrt(d_k) * max|q_gain| * max|k_gain|`` of the gains that made the step's logits: under ``"qk-norm"`` no logit
    of the step exceeds it (eq-ch8-qk-bound); under ``"sqrt"`` it stays ``sqrt(d_k)``."""

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    max_logit: list[float] = field(default_factory=list)
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
    """Train one :class:`QKNormRecallModel` under ``rule``, ``"sqrt"`` (``1/sqrt(d_k)`` alone) or ``"qk-norm"``
    (:func:`qk_norm`, then ``1/sqrt(d_k)``), as :func:`helpers.train_recall` with Adam at ``lr`` (seeds, batches,
    32 keys and values, width 64); the gains train too. Returns its :class:`LogitHistory`."""
    check.one_of("rule", rule, _RULES)
    lr = check.positive_real("lr", lr)
    seed = check.seed("seed", seed)
    check.positive_ints(steps=steps, batch_size=batch_size, n_pairs=n_pairs, d_k=d_k)
    check.at_most("n_pairs", n_pairs, "n_keys", 32, "keys are distinct within an example")
    model, optimizer, generator = seeded(
        lambda: QKNormRecallModel(d_k=d_k, qk_norm=rule == "qk-norm"), "adam", lr, seed, device
    )
    history = LogitHistory()
    for _ in range(steps):
        batch = recall_batch(batch_size, n_pairs, generator=generator, device=device)
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
            history.gain_bound.append(bound)
    return history


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
    """Train R recall models with cosine attention and a learned temperature, with Adam, as one program.

    Run ``r`` is ``train_recall(lr=lrs[r], seed=seeds[r], d_k=d_k, steps=steps)`` (same parameters, same batches)
    with the logits ``q · k / sqrt(d_k)`` replaced by ``t · cos(q, k)``, ``t = exp(min(τ, ln temperature_cap))`` and
    a learned scalar ``τ`` starting at ``ln temperature_init``: Swin Transformer V2's per-head ``logit_scale``
    (from ``log(10)``, clamped at ``log(100)``; Liu et al. 2022). Autograd computes the stacked runs' gradients;
    torch's fused Adam updates them. Returns a :class:`helpers.recall_runs.RunsHistory` (R, steps) in which
    ``logit_std`` is the spread of ``t · cos(q, k)`` and ``temperature`` is ``t``.
    """
    lrs = check.each("lrs", lrs, check.positive_real)
    seeds = check.each("seeds", seeds, check.seed)
    check.same_length("run", lrs=lrs, seeds=seeds)
    check.positive_ints(d_k=d_k, steps=steps)
    temperature_init = check.positive_real("temperature_init", temperature_init)
    temperature_cap = check.real("temperature_cap", temperature_cap, temperature_init, math.inf)
    device = torch.device("cpu" if device is None else device)
    order = sorted(range(len(lrs)), key=lambda r: lrs[r])  # runs of one rate side by side: one Adam call each
    state = init_recall_runs([seeds[r] for r in order], d_k=d_k, device=device)  # RecallModel's state_dict order
    params = [tensor.clone().requires_grad_() for tensor in state.values()]
    tau = torch.full((len(order),), math.log(temperature_init), device=device, requires_grad=True)
    update = StackedAdam([*params, tau], [lrs[r] for r in order])
    distinct = list(dict.fromkeys(seeds))
    generators = [torch.Generator().manual_seed(effective_seed(seed)) for seed in distinct]
    slot = torch.tensor([distinct.index(seeds[r]) for r in order], device=device)
    record = torch.empty(5, len(order), steps, device=device)
    for step in range(steps):
        per_seed = [recall_batch(32, generator=g) for g in generators]
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


def _cosine_forward(params: list[Tensor], temperature: Tensor, batch: RecallBatch) -> tuple[Tensor, Tensor, Tensor]:
    """RecallModel's function for R stacked runs (``params``: its state_dict's tensors, each (R, ...); ``batch``:
    fields (R, B, ...)) with logits ``t · cos(q, k)`` (``temperature``: (R,)). Returns the class logits (R, B,
    n_values), the weights (R, B, P) and the logits z (R, B, P)."""
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
