"""The softmax that attention applies, looked at from three sides.

``softmax_entropy`` measures how peaked a row of weights is, ``softmax_backward`` is the gradient that flows back
through it to the logits (and from there to queries and keys), and ``naive_softmax`` computes ``exp(z) /
sum(exp(z))`` as written on paper, to show where that overflows.
"""

from __future__ import annotations

import torch
from torch import Tensor

from helpers import _validate as check

__all__ = ["naive_softmax", "softmax_backward", "softmax_entropy"]


def softmax_entropy(p: Tensor, dim: int = -1) -> Tensor:
    """Shannon entropy in nats of the distributions ``p`` along ``dim``.

    ``0 * log 0`` counts as 0, so one-hot rows have entropy 0 and uniform rows over n entries have entropy
    ``log(n)``.

    Args:
        p: (..., n, ...) probabilities (non-negative, summing to 1 along ``dim``).
        dim: the dimension that holds each distribution.

    Returns:
        ``p`` with ``dim`` removed: (..., ...).
    """
    check.float_tensor("p", p, 1)
    entropy: Tensor = -torch.special.xlogy(p, p).sum(dim=dim)  # torch.special's stubs return Any
    return entropy


def softmax_backward(weights: Tensor, grad_weights: Tensor) -> Tensor:
    """The gradient that flows back through a softmax to its logits.

    For ``p = softmax(z)`` along the last dimension and an upstream gradient ``g = dLoss/dp``, the Jacobian ``J_ij =
    p_i (delta_ij - p_j)`` gives ``dLoss/dz = J^T g = p * (g - sum_j p_j g_j)``. That is what autograd computes,
    written out so the book can look inside it.

    Args:
        weights: (..., S) softmax outputs ``p`` (rows summing to 1).
        grad_weights: (..., S) upstream gradient ``dLoss/dp``, broadcastable to ``weights``.

    Returns:
        (..., S) gradient with respect to the logits ``z``.
    """
    check.float_tensor("weights", weights, 1)
    check.float_tensor("grad_weights", grad_weights, 1)
    check.like("grad_weights", grad_weights, "weights", weights)
    check.broadcastable("grad_weights", grad_weights, "weights", tuple(weights.shape))
    return weights * (grad_weights - (weights * grad_weights).sum(dim=-1, keepdim=True))


def naive_softmax(logits: Tensor) -> Tensor:
    """FOR DEMONSTRATION: ``exp(z) / sum(exp(z))`` over the last dimension, as written on paper.

    No library computes it this way: without subtracting the row maximum first, it breaks in two ways once the row's
    log-sum-exp passes ln of the dtype's largest number (about 11.09 in float16, 88.72 in float32). An ``exp``
    overflows to ``inf`` and the row becomes ``NaN``; or every ``exp`` fits but their sum overflows, and the row
    comes back as all zeros: finite, and wrong. The exact boundary is where the sum of the rounded exponentials
    rounds to ``inf`` (in float16: from 65520). The book uses it to show when that happens; ``torch.softmax`` and
    ``helpers.online_softmax`` never overflow for finite logits.

    Args:
        logits: (..., S) floating-point logits.

    Returns:
        (..., S) weights, in the dtype of ``logits``.
    """
    check.float_tensor("logits", logits, 1)
    exponentials = torch.exp(logits)
    return exponentials / exponentials.sum(dim=-1, keepdim=True)
