"""Scaled dot-product attention, written out by hand.

The computation the book is about:

    weights = softmax(query @ key^T * scale + mask)      # (..., L, S)
    output  = weights @ value                            # (..., L, E_v)

with ``scale = 1 / sqrt(E)`` by default, ``E = query.shape[-1]`` the width d_k that the dot product sums over.
Shapes follow ``torch.nn.functional.scaled_dot_product_attention``: ``L`` queries, ``S`` keys, and leading batch or
head dimensions ``...`` that broadcast. Beside it, the two classic beginner mistakes, written on purpose.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from helpers import _validate as check

__all__ = [
    "attention_logits", "scaled_dot_product_attention", "buggy_attention_no_scale",
    "buggy_attention_scale_after_softmax",
]  # fmt: skip


def attention_logits(query: Tensor, key: Tensor, scale: float | None = None) -> Tensor:
    """(..., L, S) the attention logits ``query @ key^T * scale`` of ``query`` (..., L, E) and ``key`` (..., S, E),
    before any mask or softmax; ``scale=None`` means ``1 / sqrt(E)``."""
    check.query_key(query, key)
    scale = check.scale("scale", scale, default=1.0 / math.sqrt(query.shape[-1]))
    return (query @ key.transpose(-2, -1)) * scale


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(Q K^T * scale + mask) V, step by step, with torch's semantics for these arguments.

    Args:
        query, key, value: (..., L, E) queries, (..., S, E) keys, (..., S, E_v) values.
        attn_mask: optional, broadcastable to (..., L, S): bool (True: the key takes part) or added to the logits.
        is_causal: query i sees keys 0..i only (the top-left lower triangle); not with ``attn_mask``.
        scale: multiplier of the logits; ``None`` means ``1 / sqrt(E)``.

    Returns ``(output, weights)``: (..., L, E_v) and (..., L, S), each row of weights a distribution over the keys.
    """
    batch = check.query_key(query, key, value)
    L, S = query.shape[-2], key.shape[-2]
    check.attn_mask(attn_mask, is_causal, query, (*batch, L, S))
    scale = check.scale("scale", scale, default=1.0 / math.sqrt(query.shape[-1]))

    logits = (query @ key.transpose(-2, -1)) * scale  # the scale acts here, before the softmax
    if is_causal:
        attn_mask = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        logits = logits.masked_fill(~attn_mask, float("-inf"))
    elif attn_mask is not None:
        logits = logits + attn_mask
    # float16 and bfloat16 lose too much in exp and in the row sum: like torch's
    # own kernels, take the softmax in float32 and round the result once.
    low_precision = logits.dtype in (torch.float16, torch.bfloat16)
    weights = torch.softmax(logits, dim=-1, dtype=torch.float32 if low_precision else None).to(logits.dtype)
    # A row whose every key is masked out has no distribution; torch's SDPA
    # returns zeros there rather than NaN, and so do we.
    weights = weights.masked_fill(torch.isneginf(logits).all(dim=-1, keepdim=True), 0.0)
    return weights @ value, weights


def buggy_attention_no_scale(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """BUG for teaching: softmax(Q K^T) V, the scale forgotten. Shapes as :func:`scaled_dot_product_attention`."""
    return scaled_dot_product_attention(query, key, value, scale=1.0)


def buggy_attention_scale_after_softmax(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """BUG for teaching: softmax(Q K^T) / sqrt(E) V, the scale applied after the softmax: the weight rows sum to
    ``1 / sqrt(E)`` instead of 1. Shapes as :func:`scaled_dot_product_attention`."""
    _, weights = buggy_attention_no_scale(query, key, value)
    weights = weights / math.sqrt(query.shape[-1])
    return weights @ value, weights
