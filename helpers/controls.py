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
"""

from __future__ import annotations

import torch
from torch import nn

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.training import RecallBatch, RecallModel, TrainHistory, recall_batch

__all__ = ["shared_value_batch", "train_shared_value"]


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
    batch = recall_batch(batch_size, n_pairs, n_keys, n_values, generator=generator, device=device)
    return batch._replace(pair_values=batch.target[:, None].expand(-1, n_pairs).contiguous())


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
    check.one_of("optimizer", optimizer, ("adam", "sgd"))
    check.positive_real("lr", lr)
    check.positive_ints(steps=steps, batch_size=batch_size)
    torch.manual_seed(effective_seed(seed))
    model = RecallModel(n_keys, n_values, d_model, d_k, scale)
    if device is not None:
        model = model.to(device)
    opt_class = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = opt_class(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(effective_seed(seed))
    history = TrainHistory()
    for _ in range(steps):
        batch = shared_value_batch(batch_size, n_pairs, n_keys, n_values, generator=generator, device=device)
        logits, weights = model(batch.pair_keys, batch.pair_values, batch.query)
        loss = nn.functional.cross_entropy(logits, batch.target)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # Tensor.backward is unannotated in torch
        opt.step()
        with torch.no_grad():
            history.loss.append(loss.item())
            history.accuracy.append((logits.argmax(-1) == batch.target).float().mean().item())
            history.attention_on_answer.append(weights.gather(1, batch.position[:, None]).mean().item())
    return history
