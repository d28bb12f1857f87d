"""Tell from the outside whether an attention function puts its scale in the right place.

The diagnosis probes an attention function with standard-normal queries and keys
and with the **identity matrix as values**. With ``V = I`` the output of
attention *is* its weight matrix, so the probe works for any function that maps
``(query, key, value)`` to an output, without reading its code. It checks the
function's formula in float32 with a value width ``d_v = seq_len``: a kernel
that accepts only half precision or equal query and value widths (FlashAttention)
is not what runs on the probe, so the probe says nothing about that kernel's
arithmetic.

Two statistics then decide:

* the **row sums** of the weights: a softmax row sums to 1; a scale applied
  after the softmax makes every row sum to that scale instead;
* the **implied scale** inside the softmax: for ``p = softmax(c * s)`` over raw
  scores ``s = q . k``, ``log p_j - log p_m = c (s_j - s_m)`` for any two keys
  ``j`` and ``m``, so a least-squares fit of log-weight differences against
  raw-score differences recovers ``c``. Correct attention gives
  ``c = 1 / sqrt(d_k)``; a forgotten scale gives ``c = 1``; a scale taken from
  the value width gives ``c = 1 / sqrt(d_v)``.

The entropy of the rows against its maximum ``log(S)`` and the mean largest
weight are reported too, as the human-readable face of the same fact.

The three candidate scales ``1``, ``1 / sqrt(d_k)`` and ``1 / sqrt(seq_len)``
(and the row sums ``1`` and ``1 / sqrt(d_k)``) can only be told apart if their
tolerance bands do not overlap, ``a - b > rel_tol * (a + b)`` for every pair
``a > b``. The probe asks for that with margin, ``a - b > 2 * rel_tol * a``,
chooses a ``seq_len`` that satisfies it when none is given, and raises
``ValueError`` when the given ``d_k``, ``seq_len`` or ``rel_tol`` cannot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from helpers import _validate as check
from helpers.device import effective_seed

__all__ = [
    "AttentionDiagnosis",
    "CORRECT",
    "NO_SCALE",
    "SCALE_AFTER_SOFTMAX",
    "VALUE_WIDTH_SCALE",
    "UNEXPECTED",
    "diagnose_attention",
    "implied_logit_scale",
    "probe_length",
]

CORRECT = "correct: scale 1/sqrt(d_k) applied to the logits"
NO_SCALE = "bug: no scale (softmax of the raw scores)"
SCALE_AFTER_SOFTMAX = "bug: scale applied after the softmax"
VALUE_WIDTH_SCALE = "bug: scaled by 1/sqrt(d_v), the value width, not 1/sqrt(d_k)"
UNEXPECTED = "unexpected: rows or scale match none of the known cases"

# Weights below this (after normalising each row) carry no usable log: they have
# underflowed or sit next to it.
_TINY = 1e-30

# Probe lengths tried, in order, when diagnose_attention is given no seq_len.
_SEQ_LEN_CANDIDATES = (32, 16, 64, 8, 128, 4, 256, 2, 512)


@dataclass(frozen=True)
class AttentionDiagnosis:
    """What :func:`diagnose_attention` found.

    Attributes:
        verdict: one of ``CORRECT``, ``NO_SCALE``, ``SCALE_AFTER_SOFTMAX``,
            ``VALUE_WIDTH_SCALE`` or ``UNEXPECTED``.
        row_sum: mean row sum of the weights (1 for a softmax).
        row_sum_spread: largest minus smallest row sum.
        implied_scale: the scale fitted inside the softmax.
        expected_scale: ``1 / sqrt(d_k)``.
        entropy_ratio: mean entropy of the (normalised) rows over its maximum ``log(S)``.
        max_weight: mean largest weight of a (normalised) row.
        seq_len: the probe's number of queries and keys, and its value width.
    """

    verdict: str
    row_sum: float
    row_sum_spread: float
    implied_scale: float
    expected_scale: float
    entropy_ratio: float
    max_weight: float
    seq_len: int = 0

    def summary(self) -> str:
        """One line at 3 significant digits, stable enough to print in a notebook."""
        return (
            f"row sum {self.row_sum:.3g}, implied scale {self.implied_scale:.3g} "
            f"(1/sqrt(d_k) = {self.expected_scale:.3g}), entropy/log(S) {self.entropy_ratio:.3g}, "
            f"max weight {self.max_weight:.3g} -> {self.verdict}"
        )


def implied_logit_scale(weights: Tensor, scores: Tensor) -> float:
    """The scale ``c`` for which the rows of ``weights`` best match ``softmax(c * scores)``.

    Each row of ``weights`` is first normalised to sum to 1 (so a constant factor
    applied after the softmax does not matter). Within a row, every usable key
    ``j`` gives one equation ``log p_j - log p_top = c (s_j - s_top)``, where
    ``top`` is the row's largest weight; ``c`` is their least-squares solution
    through the origin. Weights that have underflowed to (almost) 0 are left out.

    Args:
        weights: (..., L, S) non-negative attention weights, rows not all zero.
        scores: (..., L, S) raw scores ``q . k`` (before any scale), same shape.

    Returns:
        The fitted scale as a float; ``nan`` if no row has two usable weights.
    """
    check.float_tensor("weights", weights, 1)
    check.float_tensor("scores", scores)
    check.shape("scores", scores, tuple(weights.shape), "(..., L, S) of weights")
    check.finite_nonnegative("weights", weights)
    # float64 on the CPU: the logs of tiny weights need the range, and MPS has no float64
    p = weights.detach().to("cpu", torch.float64)
    s = scores.detach().to("cpu", torch.float64)
    p = p / p.sum(dim=-1, keepdim=True)
    top = p.argmax(dim=-1, keepdim=True)
    usable = p > _TINY
    y = torch.where(usable, p.clamp_min(_TINY).log() - p.gather(-1, top).log(), 0.0)
    x = torch.where(usable, s - s.gather(-1, top), 0.0)
    denominator = (x * x).sum()
    if denominator == 0:
        return math.nan
    return ((x * y).sum() / denominator).item()


def _close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * abs(b)


def _distinct(a: float, b: float, rel: float) -> bool:
    """True if ``a`` and ``b`` lie more than ``2 * rel * max(|a|, |b|)`` apart.

    That is enough, with margin, for no value within ``rel`` (relative) of one
    to be within ``rel`` of the other: the exact condition,
    ``|a - b| > rel * (|a| + |b|)``, is weaker, so a few pairs that could be
    told apart are refused.
    """
    return abs(a - b) > 2 * rel * max(abs(a), abs(b))


def _separates(d_k: int, seq_len: int, rel_tol: float) -> bool:
    """True if the value-width scale 1/sqrt(seq_len) is told apart from 1/sqrt(d_k) and from 1."""
    value_width = 1.0 / math.sqrt(seq_len)
    return _distinct(value_width, 1.0 / math.sqrt(d_k), rel_tol) and _distinct(value_width, 1.0, rel_tol)


def probe_length(d_k: int, rel_tol: float = 0.1) -> int:
    """A probe length (and value width) ``seq_len`` at which the diagnosis separates its cases.

    Returns the first of 32, 16, 64, 8, 128, 4, 256, 2, 512 for which
    ``1 / sqrt(seq_len)`` differs from ``1 / sqrt(d_k)`` and from 1 by more than
    ``2 * rel_tol`` (relative to the larger of each pair).

    Args:
        d_k: width of queries and keys (>= 1).
        rel_tol: the diagnosis' relative tolerance, in (0, 1).

    Returns:
        The probe length.

    Raises:
        ValueError: if ``d_k`` is too close to 1 for a missing scale to be told
            from the right one, or no candidate length separates the cases.
    """
    d_k = check.positive_int("d_k", d_k)
    rel_tol = check.real("rel_tol", rel_tol, 0, 1, exclusive=True)
    return _separating_length(d_k, None, rel_tol)


def _separating_length(d_k: int, seq_len: int | None, rel_tol: float) -> int:
    """``seq_len`` (or, if None, the first candidate length) if it separates the cases at ``d_k``; else ValueError."""
    if not _distinct(1.0 / math.sqrt(d_k), 1.0, rel_tol):
        raise ValueError(
            f"d_k = {d_k} is too small for rel_tol = {rel_tol}: 1/sqrt(d_k) = {1 / math.sqrt(d_k):.3g} is within "
            f"2*rel_tol of 1, so a missing scale cannot be told from the right one"
        )
    candidate = next((n for n in _SEQ_LEN_CANDIDATES if _separates(d_k, n, rel_tol)), None)
    if candidate is None:
        raise ValueError(
            f"no probe length separates the value-width scale from 1/sqrt(d_k) and from 1 at d_k = {d_k} "
            f"with rel_tol = {rel_tol}: lower rel_tol"
        )
    if seq_len is None:
        return candidate
    if not _separates(d_k, seq_len, rel_tol):
        raise ValueError(
            f"seq_len = {seq_len} cannot separate the cases at d_k = {d_k}: the value width is seq_len, and "
            f"1/sqrt(seq_len) = {1 / math.sqrt(seq_len):.3g} must differ from 1/sqrt(d_k) = {1 / math.sqrt(d_k):.3g} "
            f"and from 1 by more than 2*rel_tol; try seq_len={candidate} or leave it None"
        )
    return seq_len


def diagnose_attention(
    attention: Callable[[Tensor, Tensor, Tensor], object],
    d_k: int = 64,
    seq_len: int | None = None,
    batch: int = 8,
    seed: int = 0,
    device: torch.device | str | None = None,
    rel_tol: float = 0.1,
) -> AttentionDiagnosis:
    """Probe ``attention`` and say whether, and how, its scale is misplaced.

    ``attention(query, key, value)`` is called with standard-normal ``query``
    (batch, seq_len, d_k) and ``key`` (batch, seq_len, d_k), and with ``value``
    the (seq_len, seq_len) identity (so ``d_v = seq_len``), computed in float32.
    It may return the output (batch, seq_len, seq_len) or a tuple whose first
    element is the output (as the functions in ``helpers`` do).

    Args:
        attention: the function under test.
        d_k: width of queries and keys, at least 2 (at ``d_k = 1`` the right
            scale is 1, the same as none).
        seq_len: number of queries and of keys (and the value width);
            ``None`` chooses one with :func:`probe_length`. A given value must
            separate the value-width scale ``1 / sqrt(seq_len)`` from
            ``1 / sqrt(d_k)`` and from 1 by more than ``2 * rel_tol``.
        batch: number of independent probe sequences.
        seed: seed of the probe's random generator (the global one is untouched).
        device: where to run the probe; ``None`` means the CPU.
        rel_tol: relative tolerance for "sums to 1" and "matches a scale".

    Returns:
        An :class:`AttentionDiagnosis`.

    Raises:
        ValueError: if ``d_k``, ``seq_len`` and ``rel_tol`` leave two of the
            cases too close to tell apart (the message names the argument).
    """
    check.function("attention", attention)
    d_k = check.positive_int("d_k", d_k)
    batch = check.positive_int("batch", batch)
    seed = check.seed("seed", seed)
    rel_tol = check.real("rel_tol", rel_tol, 0, 1, exclusive=True)
    if seq_len is not None:
        seq_len = check.integer("seq_len", seq_len, 2, why=" (a softmax over one key says nothing)")
    seq_len = _separating_length(d_k, seq_len, rel_tol)
    device = torch.device("cpu") if device is None else torch.device(device)

    generator = torch.Generator().manual_seed(effective_seed(seed))
    query, key = torch.randn(2, batch, seq_len, d_k, generator=generator).to(device)
    value = torch.eye(seq_len, device=device).expand(batch, seq_len, seq_len)
    result = attention(query, key, value)
    weights = result[0] if isinstance(result, tuple) else result
    # what the function under test returned, rather than an argument: checked here, where the probe knows its shape
    if not isinstance(weights, Tensor):
        raise TypeError(
            f"attention must return a tensor (or a tuple that starts with one), got {type(weights).__name__}"
        )
    if weights.shape != (batch, seq_len, seq_len):
        raise ValueError(
            f"attention must return an output of shape {(batch, seq_len, seq_len)} (with the identity as values), "
            f"got {weights.shape}"
        )
    weights = weights.detach().to("cpu", torch.float64)
    scores = (query @ key.transpose(-2, -1)).to("cpu", torch.float64)

    row_sums = weights.sum(dim=-1)
    row_sum = row_sums.mean().item()
    spread = (row_sums.max() - row_sums.min()).item()
    scale = implied_logit_scale(weights, scores)
    expected = 1.0 / math.sqrt(d_k)
    distributions = weights / row_sums.unsqueeze(-1)
    entropy = -torch.special.xlogy(distributions, distributions).sum(dim=-1)
    entropy_ratio = (entropy.mean() / math.log(seq_len)).item()
    max_weight = distributions.amax(dim=-1).mean().item()

    rows_constant = spread <= rel_tol * abs(row_sum)
    if rows_constant and _close(row_sum, 1.0, rel_tol):
        if _close(scale, expected, rel_tol):
            verdict = CORRECT
        elif _close(scale, 1.0, rel_tol):
            verdict = NO_SCALE
        elif _close(scale, 1.0 / math.sqrt(seq_len), rel_tol):
            verdict = VALUE_WIDTH_SCALE
        else:
            verdict = UNEXPECTED
    elif rows_constant and _close(row_sum, expected, rel_tol) and _close(scale, 1.0, rel_tol):
        verdict = SCALE_AFTER_SOFTMAX
    else:
        verdict = UNEXPECTED
    return AttentionDiagnosis(verdict, row_sum, spread, scale, expected, entropy_ratio, max_weight, seq_len)
