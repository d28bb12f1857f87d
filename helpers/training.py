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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from torch import Tensor, nn

from helpers._validate import optional_scale, positive_int
from helpers.attention import scaled_dot_product_attention

__all__ = [
    "RecallBatch",
    "RecallModel",
    "TrainHistory",
    "moving_average",
    "recall_batch",
    "steps_to_accuracy",
    "train",
    "train_recall",
]


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
    positive_int("batch_size", batch_size)
    positive_int("n_pairs", n_pairs)
    positive_int("n_keys", n_keys)
    positive_int("n_values", n_values)
    if n_pairs > n_keys:
        raise ValueError(f"n_pairs must be <= n_keys (keys are distinct within an example), got {n_pairs} > {n_keys}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
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
        for name, value in (("n_keys", n_keys), ("n_values", n_values), ("d_model", d_model), ("d_k", d_k)):
            positive_int(name, value)
        self.scale = optional_scale(scale)
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
            if not isinstance(tensor, Tensor) or tensor.dtype != torch.int64:
                raise TypeError(f"{name} must be an int64 torch.Tensor")
        if pair_keys.dim() != 2 or pair_values.shape != pair_keys.shape:
            raise ValueError(
                f"pair_keys and pair_values must both have shape (B, P), got "
                f"{tuple(pair_keys.shape)} and {tuple(pair_values.shape)}"
            )
        if query.shape != pair_keys.shape[:1]:
            raise ValueError(f"query must have shape (B,) = {tuple(pair_keys.shape[:1])}, got {tuple(query.shape)}")
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
    if not isinstance(model, RecallModel):
        raise TypeError(f"model must be a RecallModel, got {type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    positive_int("steps", steps)
    device = next(model.parameters()).device if device is None else torch.device(device)
    generator = torch.Generator().manual_seed(seed)
    n_keys, n_values = model.key_embedding.num_embeddings, model.value_embedding.num_embeddings
    history = TrainHistory()
    for _ in range(steps):
        batch = recall_batch(batch_size, n_pairs, n_keys, n_values, generator=generator, device=device)
        logits, weights = model(batch.pair_keys, batch.pair_values, batch.query)
        loss = nn.functional.cross_entropy(logits, batch.target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
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
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr <= 0:
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    torch.manual_seed(seed)
    model = RecallModel(n_keys, n_values, d_model, d_k, scale)
    if device is not None:
        model = model.to(device)
    opt_class = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
    opt = opt_class(model.parameters(), lr=lr)
    return train(model, opt, steps, batch_size, n_pairs, seed=seed, device=device)


def steps_to_accuracy(history: TrainHistory, target: float, window: int = 20) -> int | None:
    """The first step at which the accuracy, averaged over the last ``window`` steps, reaches ``target``.

    Args:
        history: a :class:`TrainHistory`.
        target: accuracy in [0, 1].
        window: length of the running mean (steps); the first possible answer is ``window``.

    Returns:
        The number of steps taken (1-based), or ``None`` if the run never gets there.
    """
    if not isinstance(history, TrainHistory):
        raise TypeError(f"history must be a TrainHistory, got {type(history).__name__}")
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0.0 <= target <= 1.0:
        raise ValueError(f"target must be a number in [0, 1], got {target!r}")
    positive_int("window", window)
    acc = torch.tensor(history.accuracy, dtype=torch.float64)
    if acc.numel() < window:
        return None
    running = acc.unfold(0, window, 1).mean(dim=1)
    hits = (running >= target - 1e-12).nonzero()
    return int(hits[0, 0]) + window if hits.numel() else None


def moving_average(values: list[float] | Tensor, window: int = 10) -> Tensor:
    """Mean of the last ``window`` values at every step (fewer at the start), for readable curves.

    Args:
        values: (steps,) a training curve.
        window: how many steps each point averages.

    Returns:
        (steps,) the smoothed curve, as float32.
    """
    window = positive_int("window", window)
    curve = torch.as_tensor(values, dtype=torch.float32)
    if curve.dim() != 1:
        raise ValueError(f"values must be one curve (1 dimension), got shape {tuple(curve.shape)}")
    sums = torch.cat([torch.zeros(1), curve.cumsum(dim=0)])
    steps = torch.arange(1, len(curve) + 1)
    counts = steps.clamp(max=window)
    return (sums[steps] - sums[steps - counts]) / counts
