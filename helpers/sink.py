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
from helpers.logit_rules import QKNormRecallModel, seeded_adam

__all__ = ["NoAnswerBatch", "SinkHistory", "SinkRecallModel", "no_answer_batch", "train_sink"]


class NoAnswerBatch(NamedTuple):
    """A batch of recall in which some queries have no answer.

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

    Each row's keys are the first ``n_pairs`` of a random permutation of the ``n_keys`` keys; its query is one of
    them (the target is its value) or, with probability ``no_answer_share``, one of the others. Nothing then says
    which value is meant, so a calibrated model answers such a row with the uniform distribution over the
    ``n_values`` values.

    Args:
        batch_size: B.
        n_pairs: P, fewer than ``n_keys`` (an absent key must exist).
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
    return _draw(batch_size, n_pairs, n_keys, n_values, no_answer_share, generator)


def _draw(
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
    """The recall model (logits ``q · k / sqrt(d_k)``, no QK-norm) with a learned sink logit.

    The softmax runs over the row's ``P`` logits and ``sink_logit``, a learned scalar that starts at 0; the sink's
    weight is then dropped, so the weights on the pairs sum to ``1 - sink weight``. This is gpt-oss's sink
    (``eager_attention_forward`` in ``models/gpt_oss/modeling_gpt_oss.py``, transformers v4.56.0: the per-head
    ``sinks`` concatenated to the logits before the softmax, sliced off after), for one head. With ``sink=False``
    the model computes what :class:`helpers.RecallModel` does (the sink logit then gets no gradient). One seed draws
    the same parameters in both.

    Args:
        n_keys, n_values, d_model, d_k: as in :class:`helpers.RecallModel`.
        sink: whether the softmax sees the sink logit.
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
    """What :func:`train_sink` records at every step, on that step's fresh batch, before its update.

    Attributes:
        loss: the training loss (the mean over the batch's rows, see :func:`train_sink`).
        accuracy: share of the answerable rows answered correctly.
        no_answer_kl: mean over the rows with no answer of KL(uniform ‖ the model's answer), in nats.
        sink_no_answer, sink_answerable: mean weight the sink took in the rows with no answer, and in the answerable
            rows (0 without a sink).
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

    Each step draws a fresh :func:`no_answer_batch` of 32 rows of 16 pairs (32 keys, 32 values) from a CPU generator
    seeded with ``effective_seed(seed)``, the parameters having been drawn under
    ``torch.manual_seed(effective_seed(seed))``. A row's loss is the cross-entropy against its target where it has
    one, and against the uniform distribution over the values where it has none (``ln n_values`` plus KL(uniform ‖
    answer)); the step's loss is their mean, and one ``torch.optim.Adam`` update (torch's defaults) trains every
    parameter, the sink logit too.

    Args:
        sink: whether the model has the sink logit.
        lr: Adam's learning rate, > 0.
        seed: seeds the parameters and the data.
        steps: the number of steps.
        no_answer_share: as in :func:`no_answer_batch`.
        d_k: the width of queries and keys.
        device: where to compute (default: the CPU); the data are drawn on the CPU.
    """
    sink = check.boolean("sink", sink)
    lr = check.positive_real("lr", lr)
    seed = check.seed("seed", seed)
    check.positive_ints(steps=steps, d_k=d_k)
    no_answer_share = check.real("no_answer_share", no_answer_share, 0.0, 1.0)
    model, optimizer, generator = seeded_adam(lambda: SinkRecallModel(d_k=d_k, sink=sink), lr, seed, device)
    history = SinkHistory()
    for _ in range(steps):
        batch = NoAnswerBatch(*(f.to(device) for f in _draw(32, 16, 32, 32, no_answer_share, generator)))
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
