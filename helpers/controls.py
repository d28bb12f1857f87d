"""A control task for chapter 7's debugging trick: associative recall in which attention has nothing to choose.

The trick (the article's C7.7) sets the scale to 1.0 on purpose and compares the
loss curve with the standard run's. The article reads "no change" as "the task
is too easy or the model hardly uses attention". This module builds the case
where that holds by design, to test the reading: the **shared-value** task is
:func:`helpers.training.recall_batch`'s associative recall with every pair of an
example carrying the answer's value, so that any attention weights lead to it::

    pair_values[b, p] = target[b]        for every pair p of example b

Everything else is :func:`helpers.train_recall`'s: the model (one attention head
and a readout, :class:`helpers.training.RecallModel`), its initialisation from
``seed``, the optimizer and the CPU generator of the batches. A run of
:func:`train_shared_value` with seed ``s`` sees the keys, queries and targets
that ``train_recall(seed=s)`` sees; only the values of the pairs differ.

Chapters: 7.
"""

from __future__ import annotations

import torch

from helpers.training import RecallBatch, TrainHistory, recall_batch, train_recall

__all__ = ["share_the_answer", "shared_value_batch", "train_shared_value"]


def shared_value_batch(
    batch_size: int,
    n_pairs: int = 16,
    n_keys: int = 32,
    n_values: int = 32,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> RecallBatch:
    """A batch of :func:`helpers.training.recall_batch` whose pairs all carry the answer's value.

    It draws exactly what ``recall_batch`` draws (so a generator advances the
    same way) and replaces ``pair_values`` by ``target`` repeated over the pairs.

    Args:
        batch_size, n_pairs, n_keys, n_values, generator, device: as in
            :func:`helpers.training.recall_batch`.

    Returns:
        A :class:`helpers.training.RecallBatch` with ``pair_values[b, p] == target[b]``.
    """
    return share_the_answer(recall_batch(batch_size, n_pairs, n_keys, n_values, generator=generator, device=device))


def share_the_answer(batch: RecallBatch) -> RecallBatch:
    """``batch`` with every pair's value replaced by the answer's: (B, P) ``pair_values = target``."""
    return batch._replace(pair_values=batch.target[:, None].expand_as(batch.pair_values).contiguous())


def train_shared_value(
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
    """:func:`helpers.train_recall` on the shared-value task: the same model, seed, optimizer and batches.

    Args:
        scale: the multiplier of the attention logits; ``None`` means ``1 / sqrt(d_k)``.
        optimizer: ``"adam"`` (``torch.optim.Adam``) or ``"sgd"`` (plain ``torch.optim.SGD``).
        lr: learning rate.
        seed: seeds the parameters (``torch.manual_seed``) and the data.
        steps, batch_size, n_pairs, n_keys, n_values, d_model, d_k, device: as in
            :func:`helpers.train_recall`.

    Returns:
        The :class:`helpers.TrainHistory` of the run; ``attention_on_answer`` is
        the weight on the pair that recall would have needed (here every pair
        holds the answer).
    """
    return train_recall(
        scale, optimizer, lr, seed, steps, batch_size, n_pairs, n_keys, n_values, d_model, d_k, device,
        task=share_the_answer,
    )  # fmt: skip
