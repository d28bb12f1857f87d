"""A tiny attention model trained on associative recall, to watch the scale at work.

Each example shows ``n_pairs`` key–value pairs (keys distinct) and one of their keys as the query; the target is its
value, so the only way to answer is to attend to the right pair. The model is one attention head and nothing else::

    memory  = (key_embedding[pair_keys] + value_embedding[pair_values]) / sqrt(2)   # (B, P, D)
    query   = key_embedding[query_key]                                              # (B, 1, D)
    output, weights = scaled_dot_product_attention(query W_q, memory W_k, memory W_v, scale=scale)
    logits  = readout(output)                                                       # (B, n_values)

Embeddings are N(0, 1) and ``W_q``, ``W_k`` N(0, 1/D): queries and keys start with unit-variance components, the
raw dot products with variance d_k. ``B`` is the batch, ``P`` the pairs, ``D`` the width. Chapter 6 asks its readers
to read this model and loop; the chapters' grids train many runs at once (:mod:`helpers.recall_runs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

import torch
from torch import Tensor, nn

from helpers import _validate as check
from helpers.attention import scaled_dot_product_attention
from helpers.device import effective_seed

__all__ = ["RecallBatch", "RecallModel", "TrainHistory", "recall_batch", "train", "train_recall"]

_OPTIMIZERS = ("adam", "sgd")  # torch.optim.Adam with its defaults, or plain torch.optim.SGD
M = TypeVar("M", bound=nn.Module)


class RecallBatch(NamedTuple):
    """One batch of associative recall, int64 tensors: ``pair_keys`` (B, P) in [0, n_keys), distinct within a row;
    ``pair_values`` (B, P) in [0, n_values); ``query`` (B,), one of the row's keys; ``target`` (B,), its value (the
    class to predict); ``position`` (B,), the index in [0, P) of the pair that holds the answer."""

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
    """A :class:`RecallBatch` of ``batch_size`` examples, drawn on the CPU from ``generator`` (torch's global one
    where None), so that a seeded generator gives the same batch on every device, then moved to ``device``."""
    check.positive_ints(batch_size=batch_size, n_pairs=n_pairs, n_keys=n_keys, n_values=n_values)
    check.at_most("n_pairs", n_pairs, "n_keys", n_keys, "keys are distinct within an example")
    check.instance("generator", generator, (torch.Generator, type(None)), "a torch.Generator or None")
    pair_keys = torch.rand(batch_size, n_keys, generator=generator).argsort(dim=-1)[:, :n_pairs]
    pair_values = torch.randint(0, n_values, (batch_size, n_pairs), generator=generator)
    position = torch.randint(0, n_pairs, (batch_size,), generator=generator)
    rows = torch.arange(batch_size)
    batch = RecallBatch(pair_keys, pair_values, pair_keys[rows, position], pair_values[rows, position], position)
    return RecallBatch(*(t.to(device) for t in batch)) if device is not None else batch


class RecallModel(nn.Module):
    """One attention head that reads a set of key–value pairs and answers a query key.

    ``n_keys`` and ``n_values`` are the vocabularies (n_values classes), ``d_model`` D the embeddings' width, ``d_k``
    the width of queries and keys, ``scale`` the multiplier of the logits (``None``: ``1 / sqrt(d_k)``). ``qk_gain``
    multiplies the initial ``W_q`` and ``W_k``, the initial logits by its square: with ``scale=1.0`` and ``qk_gain =
    d_k**-0.25`` the 1/sqrt(d_k) sits in the initialisation, as in T5.
    """

    def __init__(
        self,
        n_keys: int = 32,
        n_values: int = 32,
        d_model: int = 64,
        d_k: int = 64,
        scale: float | None = None,
        qk_gain: float = 1.0,
    ) -> None:
        super().__init__()
        check.positive_ints(n_keys=n_keys, n_values=n_values, d_model=d_model, d_k=d_k)
        self.scale = check.optional_scale("scale", scale)
        qk_gain = check.positive_real("qk_gain", qk_gain)
        self.d_k = d_k
        self.key_embedding = nn.Embedding(n_keys, d_model)  # N(0, 1) by default
        self.value_embedding = nn.Embedding(n_values, d_model)
        self.w_q = nn.Linear(d_model, d_k, bias=False)
        self.w_k = nn.Linear(d_model, d_k, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.readout = nn.Linear(d_model, n_values)
        for layer in (self.w_q, self.w_k):  # unit-variance queries and keys at initialisation (times qk_gain)
            nn.init.normal_(layer.weight, std=qk_gain / math.sqrt(d_model))

    def forward(self, pair_keys: Tensor, pair_values: Tensor, query: Tensor) -> tuple[Tensor, Tensor]:
        """``(logits, weights)``: class logits (B, n_values) and the query's attention weights (B, P) over the
        pairs, from int64 ``pair_keys`` (B, P), ``pair_values`` (B, P) and ``query`` (B,)."""
        check.recall_inputs(pair_keys, pair_values, query)
        memory = self.memory(pair_keys, pair_values)
        q = self.w_q(self.key_embedding(query)).unsqueeze(1)  # (B, 1, d_k)
        output, weights = scaled_dot_product_attention(q, self.w_k(memory), self.w_v(memory), scale=self.scale)
        return self.readout(output.squeeze(1)), weights.squeeze(1)

    def memory(self, pair_keys: Tensor, pair_values: Tensor) -> Tensor:
        """(B, P, D) the pairs as the head reads them: ``(key_embedding + value_embedding) / sqrt(2)``."""
        memory: Tensor = (self.key_embedding(pair_keys) + self.value_embedding(pair_values)) / math.sqrt(2.0)
        return memory


@dataclass
class TrainHistory:
    """What :func:`train` records at every step, on that step's fresh batch: the cross-entropy ``loss``, the share
    of the batch answered correctly (``accuracy``) and the mean attention weight on the pair that holds the answer
    (``attention_on_answer``); each a list of ``steps`` floats."""

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
    task: Callable[[RecallBatch], RecallBatch] | None = None,
) -> TrainHistory:
    """Train ``model`` for ``steps`` optimizer steps, each on a fresh batch (so the training loss is a test loss)
    drawn from a CPU generator seeded with ``seed``; return its :class:`TrainHistory`. ``device`` defaults to the
    model's; ``task``, where given, turns each batch into another task's (:mod:`helpers.controls`)."""
    check.instance("model", model, RecallModel, "a RecallModel")
    check.instance("optimizer", optimizer, torch.optim.Optimizer, "a torch.optim.Optimizer")
    check.positive_ints(steps=steps, batch_size=batch_size, n_pairs=n_pairs)
    n_keys, n_values = model.key_embedding.num_embeddings, model.value_embedding.num_embeddings
    check.at_most("n_pairs", n_pairs, "n_keys", n_keys, "keys are distinct within an example")
    generator = torch.Generator().manual_seed(effective_seed(seed))
    device = next(model.parameters()).device if device is None else torch.device(device)
    history = TrainHistory()
    for _ in range(steps):
        batch = recall_batch(batch_size, n_pairs, n_keys, n_values, generator=generator, device=device)
        if task is not None:
            batch = task(batch)
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


def seeded(
    build: Callable[[], M], optimizer: str, lr: float, seed: int, device: torch.device | str | None
) -> tuple[M, torch.optim.Optimizer, torch.Generator]:
    """The model ``build()`` draws after ``torch.manual_seed(effective_seed(seed))``, on ``device``; its optimizer
    (``"adam"``: ``torch.optim.Adam``, torch's defaults; ``"sgd"``: plain SGD) at ``lr``; a CPU data generator seeded
    the same way."""
    torch.manual_seed(effective_seed(seed))
    model = build()
    if device is not None:
        model = model.to(device)
    opt = (torch.optim.Adam if optimizer == "adam" else torch.optim.SGD)(model.parameters(), lr=lr)
    return model, opt, torch.Generator().manual_seed(effective_seed(seed))


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
    qk_gain: float = 1.0,
    task: Callable[[RecallBatch], RecallBatch] | None = None,
) -> TrainHistory:
    """A :class:`RecallModel` built after ``torch.manual_seed(seed)``, trained by :func:`train` with ``"adam"``
    (``torch.optim.Adam``) or ``"sgd"`` (plain ``torch.optim.SGD``) at rate ``lr``: its :class:`TrainHistory`.
    ``train_recall(scale=1.0)`` is attention without its scale, ``train_recall()`` the standard ``1 / sqrt(d_k)``."""
    check.one_of("optimizer", optimizer, _OPTIMIZERS)
    check.positive_real("lr", lr)
    model, opt, _ = seeded(
        lambda: RecallModel(n_keys, n_values, d_model, d_k, scale, qk_gain), optimizer, lr, seed, device
    )
    return train(model, opt, steps, batch_size, n_pairs, seed=seed, device=device, task=task)
