"""Tell from the outside whether an attention function puts its scale in the right place.

The probe calls the function in float32 with standard-normal queries and keys (batch, S, d_k) and values ``V = [I |
0]`` (S, d_v), ``d_v > S``: the first ``S`` columns of the output *are* the weights. Two statistics decide:

* the **row sums** of the weights: 1 for a softmax; a scale applied after it makes them that scale;
* the **implied scale** inside the softmax: for ``p = softmax(c * s)`` over raw scores ``s = q . k``, ``log p_j -
  log p_m = c (s_j - s_m)``, so a least-squares fit recovers ``c``.

The known scales, ``1/sqrt(d_k)`` (correct), ``1`` (none), ``1/d_k`` (twice), ``1/sqrt(d_v)`` (the value width)
and ``1/sqrt(S)`` (the number of keys), are told apart only if their tolerance bands do not overlap, with margin
(``a - b > 2 rel_tol a`` for every pair ``a > b``): the probe chooses ``S`` and ``d_v`` that give it, or raises
``ValueError`` naming the argument that prevents it.

What it cannot see: a scale folded into the weights (T5's, in ``W_Q``'s initialisation: ``NO_SCALE``); one taken
from the number of *queries* (as many as keys here: ``KEY_COUNT_SCALE``); what acts only on large logits (Gemma 2's
soft-cap ``50 tanh(z / 50)``); a scale within ``rel_tol`` of a known one, which takes that one's name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from helpers import _validate as check
from helpers.device import effective_seed
from helpers.softmax import softmax_entropy

__all__ = [
    "AttentionDiagnosis", "CORRECT", "DOUBLE_SCALE", "KEY_COUNT_SCALE", "NO_SCALE", "SCALE_AFTER_SOFTMAX",
    "VALUE_WIDTH_SCALE", "UNEXPECTED", "diagnose_attention", "implied_logit_scale", "probe_shape",
]  # fmt: skip

CORRECT = "correct: scale 1/sqrt(d_k) applied to the logits"
NO_SCALE = "bug: no scale (softmax of the raw scores)"
DOUBLE_SCALE = "bug: scaled by 1/d_k (the scale applied twice, or d_k in place of its square root)"
SCALE_AFTER_SOFTMAX = "bug: scale applied after the softmax"
VALUE_WIDTH_SCALE = "bug: scaled by 1/sqrt(d_v), the value width, not 1/sqrt(d_k)"
KEY_COUNT_SCALE = "bug: scaled by 1/sqrt(S), the number of keys, not 1/sqrt(d_k)"
UNEXPECTED = "unexpected: rows or scale match none of the known cases"

_TINY = 1e-30  # a (normalised) weight below this has underflowed, or nearly: its log is of no use
# the probe lengths S tried, in order, and the multiples of S tried as the value width d_v
_SEQ_LEN_CANDIDATES = (32, 16, 64, 8, 128, 4, 256, 2, 512)
_VALUE_WIDTH_MULTIPLES = (2, 4, 3, 8, 16)


@dataclass(frozen=True)
class AttentionDiagnosis:
    """What :func:`diagnose_attention` found: the ``verdict`` (one of the constants above), the mean ``row_sum`` of
    the weights and its ``row_sum_spread`` (largest minus smallest), the ``implied_scale`` fitted inside the softmax
    beside the ``expected_scale`` 1/sqrt(d_k), the mean entropy of the normalised rows over ``log(S)``
    (``entropy_ratio``) and their mean largest weight, and the probe's ``seq_len`` S and ``value_width`` d_v."""

    verdict: str
    row_sum: float
    row_sum_spread: float
    implied_scale: float
    expected_scale: float
    entropy_ratio: float
    max_weight: float
    seq_len: int = 0
    value_width: int = 0

    def summary(self) -> str:
        """One line at 3 significant digits, stable enough to print in a notebook."""
        return (
            f"row sum {self.row_sum:.3g}, implied scale {self.implied_scale:.3g} "
            f"(1/sqrt(d_k) = {self.expected_scale:.3g}), entropy/log(S) {self.entropy_ratio:.3g}, "
            f"max weight {self.max_weight:.3g} -> {self.verdict}"
        )


def implied_logit_scale(weights: Tensor, scores: Tensor) -> float:
    """The scale ``c`` for which the rows of ``weights`` (..., L, S) best match ``softmax(c * scores)``, ``scores``
    (..., L, S) the raw ``q . k``; ``nan`` if no row has two usable weights.

    Each row is normalised to sum to 1 (a factor after the softmax does not matter). Every key ``j`` gives ``log p_j
    - log p_top = c (s_j - s_top)``, ``top`` the row's largest weight; ``c`` is their least-squares solution through
    the origin. Underflowed weights are left out.
    """
    check.float_tensor("weights", weights, 1)
    check.float_tensor("scores", scores)
    check.shape("scores", scores, tuple(weights.shape), "(..., L, S) of weights")
    if (weights < 0).any() or not weights.isfinite().all():
        raise ValueError("weights must be finite and non-negative")
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
    """``a`` and ``b`` lie more than ``2 * rel * max(|a|, |b|)`` apart: with margin, nothing within ``rel`` of one
    is within ``rel`` of the other."""
    return abs(a - b) > 2 * rel * max(abs(a), abs(b))


def _known_scales(d_k: int, seq_len: int, value_width: int) -> dict[str, tuple[str, float]]:
    """The verdict each scale inside the softmax stands for at one probe shape: (its formula, its value)."""
    return {
        CORRECT: ("1/sqrt(d_k)", 1.0 / math.sqrt(d_k)),
        NO_SCALE: ("1", 1.0),
        DOUBLE_SCALE: ("1/d_k", 1.0 / d_k),
        VALUE_WIDTH_SCALE: ("1/sqrt(value_width)", 1.0 / math.sqrt(value_width)),
        KEY_COUNT_SCALE: ("1/sqrt(seq_len)", 1.0 / math.sqrt(seq_len)),
    }


def _clashes(d_k: int, seq_len: int, value_width: int, rel_tol: float) -> list[str]:
    """The pairs of known scales that ``rel_tol`` cannot tell apart at this shape, as text."""
    scales = list(_known_scales(d_k, seq_len, value_width).values())
    return [
        f"{a} = {x:.3g} and {b} = {y:.3g}"
        for i, (a, x) in enumerate(scales)
        for b, y in scales[i + 1 :]
        if not _distinct(x, y, rel_tol)
    ]


def probe_shape(
    d_k: int, seq_len: int | None = None, value_width: int | None = None, rel_tol: float = 0.1
) -> tuple[int, int]:
    """``(seq_len, value_width)``: the probe's number of keys ``S`` and value width ``d_v`` (> S), chosen so that
    every known scale differs from every other by more than ``2 * rel_tol`` (relative to the larger).

    ``S`` is the first of ``_SEQ_LEN_CANDIDATES`` for which a multiple of it in ``_VALUE_WIDTH_MULTIPLES`` does so,
    ``d_v`` the first such; a given ``seq_len`` or ``value_width`` is checked instead. Raises ``ValueError``, naming
    the argument and the clash, if ``d_k`` is too close to 1 or no (or the given) shape separates the cases.
    """
    d_k = check.integer("d_k", d_k)
    rel_tol = check.real("rel_tol", rel_tol, 0, 1, exclusive=True)
    if seq_len is not None:
        seq_len = check.integer("seq_len", seq_len, 2, why=" (a softmax over one key says nothing)")
    if value_width is not None:
        value_width = check.integer("value_width", value_width)
    if not _distinct(1.0 / math.sqrt(d_k), 1.0, rel_tol):
        raise ValueError(
            f"d_k = {d_k} is too small for rel_tol = {rel_tol}: 1/sqrt(d_k) = {1 / math.sqrt(d_k):.3g} is within "
            f"2*rel_tol of 1, so a missing scale cannot be told from the right one"
        )
    if value_width is not None and seq_len is not None:
        if value_width <= seq_len:
            raise ValueError(
                f"value_width = {value_width} must exceed seq_len = {seq_len}: the values hold the identity "
                "of the keys and at least one more column"
            )
        clashes = _clashes(d_k, seq_len, value_width, rel_tol)
        if clashes:
            raise ValueError(
                f"seq_len = {seq_len} and value_width = {value_width} cannot separate the cases at d_k = {d_k} "
                f"with rel_tol = {rel_tol}: {'; '.join(clashes)}; leave one of them None"
            )
        return seq_len, value_width
    lengths = _SEQ_LEN_CANDIDATES if seq_len is None else (seq_len,)
    for length in lengths:
        if value_width is None:
            widths = (m * length for m in _VALUE_WIDTH_MULTIPLES)
            width = next((w for w in widths if not _clashes(d_k, length, w, rel_tol)), None)
            if width is not None:
                return length, width
        elif value_width > length and not _clashes(d_k, length, value_width, rel_tol):
            return length, value_width
    given = "seq_len" if seq_len is not None else "value_width" if value_width is not None else "rel_tol"
    raise ValueError(
        f"no probe shape separates the known scales at d_k = {d_k} with rel_tol = {rel_tol} and the given "
        f"{given}: 1/sqrt(seq_len) and 1/sqrt(value_width) must each differ from 1, 1/sqrt(d_k), 1/d_k and "
        f"each other by more than 2*rel_tol; "
        + ("lower rel_tol" if given == "rel_tol" else f"try another {given}, or leave it None")
    )


def diagnose_attention(
    attention: Callable[[Tensor, Tensor, Tensor], object],
    d_k: int = 64,
    seq_len: int | None = None,
    batch: int = 8,
    seed: int = 0,
    device: torch.device | str | None = None,
    rel_tol: float = 0.1,
    value_width: int | None = None,
) -> AttentionDiagnosis:
    """Probe ``attention`` and say whether, and how, its scale is misplaced: an :class:`AttentionDiagnosis`.

    ``attention(query, key, value)`` gets standard-normal ``query`` and ``key`` (batch, S, d_k) and ``value`` the
    (S, d_v) matrix ``[I | 0]`` broadcast over the batch, in float32, and returns the output (batch, S, d_v) or a
    tuple that starts with it. ``d_k`` is at least 2 (at 1 the right scale is none); ``seq_len`` S and
    ``value_width`` d_v are chosen by :func:`probe_shape` where None; ``seed`` seeds the probe's own generator (the
    global one is untouched); ``rel_tol`` is the tolerance of "sums to 1" and "matches a scale". A wrong output is a
    ``TypeError`` (no tensor) or a ``ValueError`` (its shape).
    """
    if not callable(attention):
        raise TypeError(f"attention must be callable, got {type(attention).__name__}")
    batch = check.integer("batch", batch)
    seed = check.seed("seed", seed)
    seq_len, value_width = probe_shape(d_k, seq_len, value_width, rel_tol)
    device = torch.device("cpu") if device is None else torch.device(device)

    generator = torch.Generator().manual_seed(effective_seed(seed))
    query, key = torch.randn(2, batch, seq_len, d_k, generator=generator).to(device)
    value = torch.eye(seq_len, value_width, device=device).expand(batch, seq_len, value_width)
    result = attention(query, key, value)
    output = result[0] if isinstance(result, tuple) else result
    # what the function under test returned, rather than an argument: checked here, where the probe knows its shape
    if not isinstance(output, Tensor):
        raise TypeError(
            f"attention must return a tensor (or a tuple that starts with one), got {type(output).__name__}"
        )
    if output.shape != (batch, seq_len, value_width):
        raise ValueError(
            f"attention must return an output of shape {(batch, seq_len, value_width)} (values of width "
            f"{value_width}), got {tuple(output.shape)}"
        )
    output = output.detach().to("cpu", torch.float64)
    weights, rest = output[..., :seq_len], output[..., seq_len:]
    scores = (query @ key.transpose(-2, -1)).to("cpu", torch.float64)

    row_sums = weights.sum(dim=-1)
    row_sum = row_sums.mean().item()
    spread = (row_sums.max() - row_sums.min()).item()
    # a softmax-weighted average keeps the zero columns of the values at zero
    readable = bool(torch.isfinite(output).all() and (weights >= 0).all())
    readable = readable and rest.abs().max().item() <= rel_tol * weights.abs().max().item()
    scale = implied_logit_scale(weights, scores) if readable else math.nan
    expected = 1.0 / math.sqrt(d_k)
    distributions = weights / row_sums.unsqueeze(-1)
    entropy_ratio = (softmax_entropy(distributions).mean() / math.log(seq_len)).item()
    max_weight = distributions.amax(dim=-1).mean().item()

    rows_constant = readable and spread <= rel_tol * abs(row_sum)
    verdict = UNEXPECTED
    if rows_constant and _close(row_sum, 1.0, rel_tol):
        known = _known_scales(d_k, seq_len, value_width)
        verdict = next((name for name, (_, c) in known.items() if _close(scale, c, rel_tol)), UNEXPECTED)
    elif rows_constant and _close(row_sum, expected, rel_tol) and _close(scale, 1.0, rel_tol):
        verdict = SCALE_AFTER_SOFTMAX
    return AttentionDiagnosis(
        verdict, row_sum, spread, scale, expected, entropy_ratio, max_weight, seq_len, value_width
    )
