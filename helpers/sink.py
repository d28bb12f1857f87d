"""A learned sink logit, as gpt-oss has, measured on recall with queries that have no answer.

:class:`SinkRecallModel` adds to the recall model's softmax one more logit, learned, whose weight goes to no value:
a row can then read almost nothing. :func:`train_sink` trains it on :func:`no_answer_batch`, recall in which some
queries ask for a key the row does not hold, where the calibrated answer is a uniform guess over the values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from torch import Tensor, nn

from helpers import _validate as check
from helpers.logit_rules import QKNormRecallModel
from helpers.training import seeded

__all__ = ["NoAnswerBatch", "SinkHistory", "SinkRecallModel", "no_answer_batch", "train_sink"]


class NoAnswerBatch(NamedTuple):
    """A batch of recall in which some queries have no answer: :class:`helpers.training.RecallBatch`'s
    ``pair_keys`` and ``pair_values`` (B, P); ``query`` (B,), one of the row's keys where ``answerable`` (B,) bool,
    else a key the row does not hold; ``target`` (B,), the value paired with ``query``, -1 where there is none."""

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
    """A :class:`NoAnswerBatch` on the CPU, drawn from ``generator`` (torch's global one where None).

    Each row's keys are the first ``n_pairs`` (< ``n_keys``) of a random permutation of the keys; its query is one of
    them or, with probability ``no_answer_share``, one of the others. Nothing then says which value is meant, so a
    calibrated model answers such a row with the uniform distribution over the ``n_values`` values.
    """
    check.positive_ints(batch_size=batch_size, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
    check.at_most("n_pairs", n_pairs, "n_keys - 1", n_keys - 1, "a query with no answer needs a key the row lacks")
    share = check.real("no_answer_share", no_answer_share, 0.0, 1.0)
    check.instance("generator", generator, (torch.Generator, type(None)), "a torch.Generator or None")
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
    """The recall model (logits ``q · k / sqrt(d_k)``, no QK-norm) with a learned sink logit.

    The softmax runs over the row's ``P`` logits and ``sink_logit``, a learned scalar that starts at 0; the sink's
    weight is then dropped, so the weights on the pairs sum to ``1 - sink weight``: gpt-oss's per-head ``sinks``
    (``eager_attention_forward`` in ``models/gpt_oss/modeling_gpt_oss.py``, transformers v4.56.0), for one head.
    ``sink=False`` computes :class:`helpers.RecallModel`'s function; one seed draws the same parameters in both.
    """

    def __init__(self, n_keys: int = 32, n_values: int = 32, d_model: int = 64, d_k: int = 64, sink: bool = True):
        super().__init__(n_keys, n_values, d_model, d_k, qk_norm=False)
        self.sink = check.boolean("sink", sink)
        self.sink_logit = nn.Parameter(torch.zeros(()))

    def attention_weights(self, z: Tensor) -> Tensor:
        """(B, P) the weights from the logits ``z`` (B, P); with the sink a row sums to less than 1."""
        if not self.sink:
            return super().attention_weights(z)
        with_sink = torch.cat([z, self.sink_logit.expand(z.shape[0], 1)], dim=-1)  # (B, P + 1)
        return with_sink.softmax(dim=-1)[:, :-1]  # the sink's column dropped: it carries no value


@dataclass
class SinkHistory:
    """What :func:`train_sink` records at every step, on that step's fresh batch, before its update: the ``loss``;
    the share of the answerable rows answered correctly (``accuracy``); the mean KL(uniform ‖ answer) in nats over
    the rows with no answer (``no_answer_kl``); the sink's mean weight in those rows and in the answerable ones
    (``sink_no_answer``, ``sink_answerable``: 0 without a sink); the ``sink_logit`` that made the step's weights."""

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
    """Train a :class:`SinkRecallModel` (with or without the ``sink``) with Adam on no-answer recall: its history.

    Seeds and optimizer as in :func:`helpers.logit_rules.train_logit_rule`; each step draws a fresh
    :func:`no_answer_batch` of 32 rows of 16 pairs. A row's loss is the cross-entropy against its target, or against
    the uniform distribution over the values where it has none (``ln n_values`` plus KL(uniform ‖ answer)).
    """
    sink = check.boolean("sink", sink)
    lr = check.positive_real("lr", lr)
    seed = check.seed("seed", seed)
    check.positive_ints(steps=steps, d_k=d_k)
    no_answer_share = check.real("no_answer_share", no_answer_share, 0.0, 1.0)
    model, optimizer, generator = seeded(lambda: SinkRecallModel(d_k=d_k, sink=sink), "adam", lr, seed, device)
    history = SinkHistory()
    for _ in range(steps):
        drawn = no_answer_batch(32, 16, 32, 32, no_answer_share, generator=generator)
        batch = NoAnswerBatch(*(f.to(device) for f in drawn))
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
