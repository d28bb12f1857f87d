"""A control task for chapter 7's debugging trick: associative recall in which attention has nothing to choose.

The trick (the article's C7.7) sets the scale to 1.0 on purpose and reads "no change" in the loss curve as "the task
is too easy or the model hardly uses attention". The **shared-value** task builds that case: recall with every pair
carrying the answer's value (``pair_values[b, p] = target[b]``), so that any attention weights lead to it. The rest
is :func:`helpers.train_recall`'s: seed ``s`` sees the keys, queries and targets of ``train_recall(seed=s)``.
"""

from __future__ import annotations

from typing import Any

from helpers.training import RecallBatch, TrainHistory, train_recall

__all__ = ["share_the_answer", "train_shared_value"]


def share_the_answer(batch: RecallBatch) -> RecallBatch:
    """``batch`` with every pair's value replaced by the answer's: (B, P) ``pair_values = target``."""
    return batch._replace(pair_values=batch.target[:, None].expand_as(batch.pair_values).contiguous())


def train_shared_value(scale: float | None = None, **options: Any) -> TrainHistory:
    """:func:`helpers.train_recall` (the same options: ``optimizer``, ``lr``, ``seed``, ``steps``, ...) on the
    shared-value task; ``attention_on_answer`` is the weight on the pair recall would have needed."""
    return train_recall(scale, task=share_the_answer, **options)
