"""Rules that recent models apply to the attention logits besides the scale: QK-norm, measured on the recall task.

:func:`qk_norm` is the per-head RMSNorm with a learned gain that Qwen3 and Gemma 3 apply to queries
and keys before their product. :class:`QKNormRecallModel` is chapter 6's recall model
(:class:`helpers.RecallModel`) with that norm on ``q`` and ``k`` and the scale ``1/sqrt(d_k)`` kept on
top, as those models keep ``head_dim**-0.5``; with ``qk_norm=False`` it computes exactly what
``RecallModel`` computes. :func:`train_logit_rule` trains either on fresh recall batches, as
:func:`helpers.train_recall` does, and records the largest attention logit of each step's batch, which
:class:`helpers.TrainHistory` does not.

Chapters: 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.softmax import softmax_entropy
from helpers.training import RecallModel, _draw_recall_batch

__all__ = ["LogitHistory", "QKNormRecallModel", "qk_norm", "train_logit_rule"]

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
        for name, tensor in (("pair_keys", pair_keys), ("pair_values", pair_values), ("query", query)):
            check.tensor(name, tensor, torch.int64)
        check.dims("pair_keys", pair_keys, 2, "B, P")
        check.shape("pair_values", pair_values, tuple(pair_keys.shape), "(B, P)")
        check.shape("query", query, tuple(pair_keys.shape[:1]), "(B,)")
        memory = (self.key_embedding(pair_keys) + self.value_embedding(pair_values)) / math.sqrt(2.0)
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
        weights = z.softmax(dim=-1)
        memory = (self.key_embedding(pair_keys) + self.value_embedding(pair_values)) / math.sqrt(2.0)
        output = (weights.unsqueeze(1) @ self.w_v(memory)).squeeze(1)  # (B, D)
        return self.readout(output), weights


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
    torch.manual_seed(effective_seed(seed))
    model = QKNormRecallModel(d_k=d_k, qk_norm=rule == "qk-norm")
    if device is not None:
        model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(effective_seed(seed))
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
