"""The softmax that attention applies, looked at from three sides.

``softmax_entropy`` measures how peaked a row of weights is, ``softmax_backward`` is the gradient that flows back
through it to the logits, and ``naive_softmax`` is ``exp(z) / sum(exp(z))`` as on paper, to show where it overflows.
"""

from __future__ import annotations

import torch
from torch import Tensor

from helpers import _validate as check

__all__ = ["naive_softmax", "softmax_backward", "softmax_entropy"]


def softmax_entropy(p: Tensor, dim: int = -1) -> Tensor:
    """Shannon entropy in nats of the distributions ``p`` (..., n, ...) along ``dim``: ``p`` with ``dim`` removed.

    ``0 * log 0`` counts as 0: a one-hot row has entropy 0, a uniform row over n entries ``log(n)``.
    """
    check.float_tensor("p", p, 1)
    entropy: Tensor = -torch.special.xlogy(p, p).sum(dim=dim)  # torch.special's stubs return Any
    return entropy


def softmax_backward(weights: Tensor, grad_weights: Tensor) -> Tensor:
    """(..., S) the gradient ``dLoss/dz`` that flows back through a softmax to its logits.

    For ``weights`` ``p = softmax(z)`` (..., S) and an upstream ``grad_weights`` ``g = dLoss/dp`` broadcastable to
    it, the Jacobian ``J_ij = p_i (delta_ij - p_j)`` gives ``dLoss/dz = J^T g = p * (g - sum_j p_j g_j)``: what
    autograd computes, written out so the book can look inside it.
    """
    check.float_tensor("weights", weights, 1)
    check.float_tensor("grad_weights", grad_weights, 1)
    check.like("grad_weights", grad_weights, "weights", weights)
    check.broadcastable("grad_weights", grad_weights, "weights", tuple(weights.shape))
    return weights * (grad_weights - (weights * grad_weights).sum(dim=-1, keepdim=True))


def naive_softmax(logits: Tensor) -> Tensor:
    """FOR DEMONSTRATION: ``exp(z) / sum(exp(z))`` over the last dimension of ``logits`` (..., S), as on paper.

    Without subtracting the row maximum first, it breaks once the row's log-sum-exp passes ln of the dtype's largest
    number (about 11.09 in float16, 88.72 in float32): an ``exp`` overflows and the row becomes ``NaN``, or every
    ``exp`` fits but their sum rounds to ``inf`` (in float16: from 65520) and the row comes back as zeros: finite,
    and wrong. ``torch.softmax`` and ``helpers.online_softmax`` never overflow for finite logits.
    """
    check.float_tensor("logits", logits, 1)
    exponentials = torch.exp(logits)
    return exponentials / exponentials.sum(dim=-1, keepdim=True)
