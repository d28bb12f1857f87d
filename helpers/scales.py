"""What a logit multiplier does to attention at initialisation.

Chapters 4 and 5 compare multipliers of the raw scores ``q . k`` (none, ``1/sqrt(d_k)``, ``1/d_k``, ...) on the same
footing: standard-normal queries and keys and a random upstream gradient, as at the first step of training.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from helpers import _validate as check
from helpers.attention import attention_logits
from helpers.device import seed_everything
from helpers.softmax import softmax_backward, softmax_entropy

__all__ = ["attention_statistics_at_init"]


def attention_statistics_at_init(
    d_k: int,
    multipliers: Sequence[float],
    seed: int,
    batch: int = 1,
    seq_len: int = 128,
    device: torch.device | str | None = None,
) -> list[dict[str, float]]:
    """Logit spread, softmax entropy and gradient sizes, for each multiplier of the same scores.

    After ``helpers.seed_everything(seed)``, draws queries and keys (batch, seq_len, d_k) and an upstream gradient
    ``g = dLoss/dp`` (batch, seq_len, seq_len), standard normal, float32 (the loss ``sum(p * g)``), once; then for
    each multiplier, with ``z = multiplier * q @ k^T`` and ``p = softmax(z)``, returns a dict of the means over rows:

    - ``"logit std"``: the standard deviation of the logits ``z`` (over all entries),
    - ``"entropy"``: the entropy of a row of ``p``, in nats (``log(seq_len)`` is uniform),
    - ``"max weight"``: the largest weight in a row,
    - ``"logit grad norm"``: the norm of ``dLoss/dz`` for a row (``helpers.softmax_backward``),
    - ``"query grad norm"``: the norm of ``dLoss/dq = multiplier * (dLoss/dz) @ k`` for a query.
    """
    check.positive_ints(d_k=d_k, batch=batch, seq_len=seq_len)
    multipliers = check.each("multipliers", multipliers, check.positive_real)
    device = torch.device("cpu") if device is None else torch.device(device)
    seed_everything(seed)  # checks the seed
    q, k = torch.randn(2, batch, seq_len, d_k, device=device)
    upstream = torch.randn(batch, seq_len, seq_len, device=device)
    raw = attention_logits(q, k, scale=1.0)
    gram = k @ k.transpose(-2, -1)  # |m * g @ k|^2 = m^2 * g @ (k k^T) @ g^T, one matmul for every m
    results = []
    for multiplier in multipliers:
        logits = raw * multiplier
        weights = torch.softmax(logits, dim=-1)
        grad_logits = softmax_backward(weights, upstream)
        grad_query_norm = multiplier * ((grad_logits @ gram) * grad_logits).sum(dim=-1).clamp(min=0).sqrt()
        results.append(
            {
                "logit std": logits.std().item(),
                "entropy": softmax_entropy(weights).mean().item(),
                "max weight": weights.amax(dim=-1).mean().item(),
                "logit grad norm": grad_logits.norm(dim=-1).mean().item(),
                "query grad norm": grad_query_norm.mean().item(),
            }
        )
    return results
