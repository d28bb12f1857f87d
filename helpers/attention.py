"""Scaled dot-product attention, written out by hand.

This is the computation the book is about:

    weights = softmax(query @ key^T * scale + mask)      # (..., L, S)
    output  = weights @ value                            # (..., L, E_v)

with ``scale = 1 / sqrt(E)`` by default, where ``E = query.shape[-1]`` is the
width d_k that the dot product sums over. Shapes follow
``torch.nn.functional.scaled_dot_product_attention``: ``L`` is the number of
queries, ``S`` the number of keys, and any leading batch or head dimensions
``...`` broadcast against each other.

Two deliberately wrong versions sit beside the correct one, so that the book
can run and measure the two classic beginner mistakes.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from helpers._validate import optional_scale

__all__ = [
    "attention_logits",
    "scaled_dot_product_attention",
    "buggy_attention_no_scale",
    "buggy_attention_scale_after_softmax",
    "naive_softmax",
    "softmax_backward",
    "softmax_entropy",
]


def _shape(tensor: Tensor) -> tuple[int, ...]:
    return tuple(tensor.shape)


def _check_tensor(name: str, tensor: object) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")
    if tensor.dim() < 2:
        raise ValueError(
            f"{name} must have at least 2 dimensions (..., length, features), "
            f"got shape {_shape(tensor)}"
        )
    return tensor


def _check_query_key(query: object, key: object) -> None:
    _check_tensor("query", query)
    _check_tensor("key", key)
    if key.dtype != query.dtype:
        raise TypeError(f"query and key must share one dtype, got query {query.dtype} and key {key.dtype}")
    if key.device != query.device:
        raise ValueError(f"query and key must be on one device, got query on {query.device} and key on {key.device}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must have the same last dimension d_k, "
            f"got query {_shape(query)} and key {_shape(key)}"
        )
    try:
        torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the batch dimensions of query and key do not broadcast: "
            f"query {_shape(query)}, key {_shape(key)}"
        ) from None


def _check_value(query: Tensor, key: Tensor, value: object) -> None:
    _check_tensor("value", value)
    if value.dtype != query.dtype:
        raise TypeError(f"value must have the dtype of query ({query.dtype}), got {value.dtype}")
    if value.device != query.device:
        raise ValueError(f"value must be on the device of query ({query.device}), got {value.device}")
    if value.shape[-2] != key.shape[-2]:
        raise ValueError(
            "key and value must have the same length S (dimension -2), "
            f"got key {_shape(key)} and value {_shape(value)}"
        )
    try:
        torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the batch dimensions of query, key and value do not broadcast: "
            f"query {_shape(query)}, key {_shape(key)}, value {_shape(value)}"
        ) from None


def _resolve_scale(query: Tensor, scale: object) -> float:
    scale = optional_scale(scale)
    return 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale


def _check_mask(attn_mask: object, query: Tensor, logits_shape: tuple[int, ...]) -> Tensor:
    if not isinstance(attn_mask, Tensor):
        raise TypeError(f"attn_mask must be a torch.Tensor or None, got {type(attn_mask).__name__}")
    if attn_mask.dtype != torch.bool and attn_mask.dtype != query.dtype:
        raise TypeError(
            f"attn_mask must be bool or have the dtype of query ({query.dtype}), got {attn_mask.dtype}"
        )
    if attn_mask.device != query.device:
        raise ValueError(f"attn_mask must be on the device of query ({query.device}), got {attn_mask.device}")
    try:
        if torch.broadcast_shapes(attn_mask.shape, logits_shape) != torch.Size(logits_shape):
            raise RuntimeError
    except RuntimeError:
        raise ValueError(
            f"attn_mask of shape {_shape(attn_mask)} does not broadcast to the "
            f"attention logits of shape {logits_shape} (..., L, S)"
        ) from None
    return attn_mask


def attention_logits(query: Tensor, key: Tensor, scale: float | None = None) -> Tensor:
    """The attention logits ``query @ key^T * scale``, before any mask or softmax.

    Args:
        query: (..., L, E) queries.
        key: (..., S, E) keys; E must match ``query``.
        scale: multiplier for the dot products; ``None`` means ``1 / sqrt(E)``.

    Returns:
        (..., L, S) logits, in the dtype of ``query``.
    """
    _check_query_key(query, key)
    return (query @ key.transpose(-2, -1)) * _resolve_scale(query, scale)


def _softmax(logits: Tensor) -> Tensor:
    # float16 and bfloat16 lose too much in exp and in the row sum: like torch's
    # own kernels, take the softmax in float32 and round the result once.
    low_precision = logits.dtype in (torch.float16, torch.bfloat16)
    weights = torch.softmax(logits, dim=-1, dtype=torch.float32 if low_precision else None)
    weights = weights.to(logits.dtype)
    # A row whose every key is masked out has no distribution; torch's SDPA
    # returns zeros there rather than NaN, and so do we.
    fully_masked = torch.isneginf(logits).all(dim=-1, keepdim=True)
    return weights.masked_fill(fully_masked, 0.0)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(Q K^T * scale + mask) V, step by step; returns the weights too.

    Same semantics as ``torch.nn.functional.scaled_dot_product_attention`` for
    these arguments.

    Args:
        query: (..., L, E) queries.
        key: (..., S, E) keys.
        value: (..., S, E_v) values.
        attn_mask: optional mask broadcastable to (..., L, S). A bool mask marks
            with True the keys that take part; a float mask (dtype of ``query``)
            is added to the logits.
        is_causal: query i sees keys 0..i only (the top-left lower triangle).
            Cannot be combined with ``attn_mask``.
        scale: multiplier of the logits; ``None`` means ``1 / sqrt(E)``.

    Returns:
        ``(output, weights)``: output (..., L, E_v) and the attention weights
        (..., L, S), each row a probability distribution over the S keys.
    """
    _check_query_key(query, key)
    _check_value(query, key, value)
    if not isinstance(is_causal, bool):
        raise TypeError(f"is_causal must be a bool, got {type(is_causal).__name__}")
    scale = _resolve_scale(query, scale)
    L, S = query.shape[-2], key.shape[-2]
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    logits_shape = (*batch, L, S)

    if is_causal:
        if attn_mask is not None:
            raise ValueError("attn_mask must be None when is_causal=True (torch's rule as well)")
        attn_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
    elif attn_mask is not None:
        attn_mask = _check_mask(attn_mask, query, logits_shape)

    logits = attention_logits(query, key, scale)  # the scale acts here, before softmax
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        logits = logits.masked_fill(~attn_mask, float("-inf"))
    elif attn_mask is not None:
        logits = logits + attn_mask
    weights = _softmax(logits)
    return weights @ value, weights


def buggy_attention_no_scale(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """BUG for teaching: softmax(Q K^T) V, the scale forgotten.

    Args: query (..., L, E), key (..., S, E), value (..., S, E_v).
    Returns: ``(output, weights)`` of shapes (..., L, E_v) and (..., L, S).
    """
    return scaled_dot_product_attention(query, key, value, scale=1.0)


def buggy_attention_scale_after_softmax(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """BUG for teaching: softmax(Q K^T) / sqrt(E) V, the scale applied after softmax.

    Args: query (..., L, E), key (..., S, E), value (..., S, E_v).
    Returns: ``(output, weights)`` of shapes (..., L, E_v) and (..., L, S);
    the weight rows sum to ``1 / sqrt(E)`` instead of 1.
    """
    _, weights = buggy_attention_no_scale(query, key, value)
    weights = weights / math.sqrt(query.shape[-1])
    return weights @ value, weights


def softmax_entropy(p: Tensor, dim: int = -1) -> Tensor:
    """Shannon entropy in nats of the distributions ``p`` along ``dim``.

    ``0 * log 0`` counts as 0, so one-hot rows have entropy 0 and uniform rows
    over n entries have entropy ``log(n)``.

    Args:
        p: (..., n, ...) probabilities (non-negative, summing to 1 along ``dim``).
        dim: the dimension that holds each distribution.

    Returns:
        ``p`` with ``dim`` removed: (..., ...).
    """
    if not isinstance(p, Tensor):
        raise TypeError(f"p must be a torch.Tensor, got {type(p).__name__}")
    if not p.is_floating_point():
        raise TypeError(f"p must be a floating-point tensor, got dtype {p.dtype}")
    if p.dim() == 0:
        raise ValueError("p must have at least 1 dimension, got a 0-dimensional tensor")
    return -torch.special.xlogy(p, p).sum(dim=dim)


def softmax_backward(weights: Tensor, grad_weights: Tensor) -> Tensor:
    """The gradient that flows back through a softmax to its logits.

    For ``p = softmax(z)`` along the last dimension and an upstream gradient
    ``g = dLoss/dp``, the Jacobian ``J_ij = p_i (delta_ij - p_j)`` gives
    ``dLoss/dz = J^T g = p * (g - sum_j p_j g_j)``. That is what autograd
    computes, written out so the book can look inside it.

    Args:
        weights: (..., S) softmax outputs ``p`` (rows summing to 1).
        grad_weights: (..., S) upstream gradient ``dLoss/dp``, broadcastable to ``weights``.

    Returns:
        (..., S) gradient with respect to the logits ``z``.
    """
    for name, tensor in (("weights", weights), ("grad_weights", grad_weights)):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
        if not tensor.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")
        if tensor.dim() < 1:
            raise ValueError(f"{name} must have at least 1 dimension, got a 0-dimensional tensor")
    if grad_weights.dtype != weights.dtype:
        raise TypeError(f"grad_weights must have the dtype of weights ({weights.dtype}), got {grad_weights.dtype}")
    if grad_weights.device != weights.device:
        raise ValueError(f"grad_weights must be on the device of weights ({weights.device}), got {grad_weights.device}")
    try:
        torch.broadcast_shapes(weights.shape, grad_weights.shape)
    except RuntimeError:
        raise ValueError(
            f"grad_weights of shape {_shape(grad_weights)} does not broadcast to weights of shape {_shape(weights)}"
        ) from None
    return weights * (grad_weights - (weights * grad_weights).sum(dim=-1, keepdim=True))


def naive_softmax(logits: Tensor) -> Tensor:
    """FOR DEMONSTRATION: ``exp(z) / sum(exp(z))`` over the last dimension, as written on paper.

    No library computes it this way: without subtracting the row maximum first,
    ``exp`` overflows to ``inf`` for large logits (above about 11 in float16 and
    88.7 in float32) and the row becomes ``NaN``. The book uses it to show when
    that happens; ``torch.softmax`` and ``helpers.online_softmax`` never overflow.

    Args:
        logits: (..., S) floating-point logits.

    Returns:
        (..., S) weights, in the dtype of ``logits``.
    """
    if not isinstance(logits, Tensor):
        raise TypeError(f"logits must be a torch.Tensor, got {type(logits).__name__}")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor, got dtype {logits.dtype}")
    if logits.dim() < 1:
        raise ValueError("logits must have at least 1 dimension, got a 0-dimensional tensor")
    exponentials = torch.exp(logits)
    return exponentials / exponentials.sum(dim=-1, keepdim=True)
