"""Softmax and attention computed block by block, the way fused kernels do it.

A fused attention kernel (FlashAttention and its descendants) never holds a whole row of logits: it walks over the
keys in blocks, keeping for every query a running maximum ``m`` and a running sum ``l`` of exponentials, and rescales
what it has accumulated by ``exp(m_old - m_new)`` when a block raises the maximum. Nothing is exponentiated above 0,
so nothing overflows. FlashAttention also takes the running maximum of the *raw* scores and evaluates ``exp2(s *
scale * log2(e) - m * scale * log2(e))`` (``exp2`` is cheaper on GPUs): ``use_exp2=True`` here.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from helpers import _validate as check

__all__ = ["online_softmax", "online_attention"]

LOG2_E = math.log2(math.e)


def online_softmax(logits: Tensor, block_size: int = 64) -> Tensor:
    """``torch.softmax(logits, dim=-1)`` of ``logits`` (..., S), up to rounding, reading ``block_size`` entries a
    step: one streaming pass keeps the running maximum and the running sum of ``exp(logit - max)``, a second
    normalises. Computed in the dtype of ``logits``."""
    check.float_tensor("logits", logits, 1)
    if logits.shape[-1] == 0:
        raise ValueError(f"logits must have a non-empty last dimension, got shape {tuple(logits.shape)}")
    block_size = check.integer("block_size", block_size)
    running_max = torch.full(logits.shape[:-1], -math.inf, dtype=logits.dtype, device=logits.device)
    running_sum = torch.zeros(logits.shape[:-1], dtype=logits.dtype, device=logits.device)
    for block in torch.split(logits, block_size, dim=-1):
        new_max = torch.maximum(running_max, block.amax(dim=-1))
        # exp(-inf - -inf) would be NaN: a row that has seen only -inf keeps a sum of 0
        safe_max = torch.where(torch.isneginf(new_max), torch.zeros_like(new_max), new_max)
        rescale = torch.exp(running_max - safe_max)
        running_sum = running_sum * rescale + torch.exp(block - safe_max.unsqueeze(-1)).sum(dim=-1)
        running_max = new_max
    return torch.exp(logits - running_max.unsqueeze(-1)) / running_sum.unsqueeze(-1)


def online_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    scale: float | None = None,
    block_size: int = 64,
    use_exp2: bool = False,
) -> Tensor:
    """(..., L, E_v) ``softmax(Q K^T * scale) V`` up to rounding, over blocks of ``block_size`` keys with a running
    max and sum: FlashAttention's forward pass, without a mask, in the dtype of the inputs.

    Shapes and ``scale`` as :func:`helpers.scaled_dot_product_attention`. ``use_exp2``: fold ``scale * log2(e)``
    into ``exp2`` after the running max of the raw scores, as FlashAttention does.
    """
    batch = check.query_key(query, key, value)
    scale = check.scale("scale", scale, default=1.0 / math.sqrt(query.shape[-1]))
    block_size = check.integer("block_size", block_size)
    check.boolean("use_exp2", use_exp2)

    L, E_v = query.shape[-2], value.shape[-1]
    running_max = torch.full((*batch, L, 1), -math.inf, dtype=query.dtype, device=query.device)
    running_sum = torch.zeros((*batch, L, 1), dtype=query.dtype, device=query.device)
    accumulator = torch.zeros((*batch, L, E_v), dtype=query.dtype, device=query.device)
    blocks = zip(torch.split(key, block_size, dim=-2), torch.split(value, block_size, dim=-2), strict=True)
    for key_block, value_block in blocks:
        raw = query @ key_block.transpose(-2, -1)  # (..., L, block): unscaled scores
        if use_exp2:
            # the max is taken on raw scores; the scale only enters inside exp2
            new_max = torch.maximum(running_max, raw.amax(dim=-1, keepdim=True))
            weights = torch.exp2(raw * (scale * LOG2_E) - new_max * (scale * LOG2_E))
            rescale = torch.exp2((running_max - new_max) * (scale * LOG2_E))
        else:
            logits = raw * scale
            new_max = torch.maximum(running_max, logits.amax(dim=-1, keepdim=True))
            weights = torch.exp(logits - new_max)
            rescale = torch.exp(running_max - new_max)
        running_sum = running_sum * rescale + weights.sum(dim=-1, keepdim=True)
        accumulator = accumulator * rescale + weights @ value_block
        running_max = new_max
    return accumulator / running_sum
