"""helpers.diagnostics: the probe tells correct attention from the scale bugs."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import (
    buggy_attention_no_scale,
    buggy_attention_scale_after_softmax,
    diagnose_attention,
    diagnostics,
    scaled_dot_product_attention,
)
from helpers.diagnostics import implied_logit_scale


def value_width_attention(query, key, value):
    # the GPT-2-style slip: divide by the value's width instead of the key's
    return scaled_dot_product_attention(query, key, value, scale=1 / math.sqrt(value.shape[-1]))


@pytest.mark.parametrize(
    "attention, verdict",
    [
        (scaled_dot_product_attention, diagnostics.CORRECT),
        (F.scaled_dot_product_attention, diagnostics.CORRECT),
        (buggy_attention_no_scale, diagnostics.NO_SCALE),
        (buggy_attention_scale_after_softmax, diagnostics.SCALE_AFTER_SOFTMAX),
        (value_width_attention, diagnostics.VALUE_WIDTH_SCALE),
    ],
)
@pytest.mark.parametrize("d_k", [16, 64, 256])
def test_verdicts(attention, verdict, d_k):
    for seed in range(3):
        diagnosis = diagnose_attention(attention, d_k=d_k, seed=seed)
        assert diagnosis.verdict == verdict, diagnosis.summary()


def test_scale_by_d_k_is_unexpected_and_fitted():
    diagnosis = diagnose_attention(lambda q, k, v: scaled_dot_product_attention(q, k, v, scale=1 / 64), d_k=64)
    assert diagnosis.verdict == diagnostics.UNEXPECTED
    assert diagnosis.implied_scale == pytest.approx(1 / 64, rel=1e-6)


def test_implied_scale_recovers_the_scale_exactly():
    generator = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 10, 20, generator=generator, dtype=torch.float64) * 5
    for scale in (0.01, 0.125, 1.0, 3.0):
        weights = torch.softmax(scale * scores, dim=-1)
        assert implied_logit_scale(weights, scores) == pytest.approx(scale, rel=1e-9)
        # a constant factor after the softmax changes nothing
        assert implied_logit_scale(weights * 0.3, scores) == pytest.approx(scale, rel=1e-9)


def test_implied_scale_ignores_underflowed_weights():
    scores = torch.tensor([[0.0, -1.0, -2000.0]])
    weights = torch.softmax(scores, dim=-1)  # the last weight is exactly 0
    assert weights[0, 2] == 0
    assert implied_logit_scale(weights, scores) == pytest.approx(1.0, rel=1e-6)
    assert math.isnan(implied_logit_scale(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, -1.0]])))


def test_summary_is_one_line():
    line = diagnose_attention(scaled_dot_product_attention).summary()
    assert "\n" not in line and "implied scale 0.125" in line


def test_bad_inputs_name_the_argument():
    with pytest.raises(TypeError, match="attention"):
        diagnose_attention("not a function")
    with pytest.raises(ValueError, match="seq_len"):
        diagnose_attention(scaled_dot_product_attention, d_k=32, seq_len=32)
    with pytest.raises(ValueError, match="seq_len"):
        diagnose_attention(scaled_dot_product_attention, seq_len=1)
    with pytest.raises(TypeError, match="d_k"):
        diagnose_attention(scaled_dot_product_attention, d_k=8.0)
    with pytest.raises(ValueError, match="batch"):
        diagnose_attention(scaled_dot_product_attention, batch=0)
    with pytest.raises(ValueError, match="rel_tol"):
        diagnose_attention(scaled_dot_product_attention, rel_tol=2)
    with pytest.raises(ValueError, match="attention must return"):
        diagnose_attention(lambda q, k, v: q)
    with pytest.raises(TypeError, match="weights"):
        implied_logit_scale([[1.0]], torch.zeros(1, 1))
    with pytest.raises(TypeError, match="scores"):
        implied_logit_scale(torch.ones(1, 2), torch.zeros(1, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="shape"):
        implied_logit_scale(torch.ones(2, 3), torch.zeros(3, 2))
    with pytest.raises(ValueError, match="non-negative"):
        implied_logit_scale(-torch.ones(2, 3), torch.zeros(2, 3))


SUSPECTS = [
    (scaled_dot_product_attention, diagnostics.CORRECT),
    (F.scaled_dot_product_attention, diagnostics.CORRECT),
    (buggy_attention_no_scale, diagnostics.NO_SCALE),
    (buggy_attention_scale_after_softmax, diagnostics.SCALE_AFTER_SOFTMAX),
    (value_width_attention, diagnostics.VALUE_WIDTH_SCALE),
]


def separable(d_k: int, seq_len: int, rel_tol: float) -> bool:
    # The condition of issue 15, written independently of the helper: the value-width
    # scale 1/sqrt(seq_len) and the right scale 1/sqrt(d_k) must differ by more than
    # twice the tolerance, seen from either side.
    ratio = math.sqrt(seq_len / d_k)
    return abs(ratio - 1) > 2 * rel_tol and abs(1 / ratio - 1) > 2 * rel_tol


def check_probe(d_k: int, seq_len: int | None, rel_tol: float = 0.1) -> None:
    """Either a ValueError that names the argument at fault, or the right verdict for every suspect."""
    try:
        first = diagnose_attention(SUSPECTS[0][0], d_k=d_k, seq_len=seq_len, rel_tol=rel_tol)
    except ValueError as error:
        assert "seq_len" in str(error) or "d_k" in str(error), str(error)
        # refusing is right only where the cases cannot be told apart
        assert d_k == 1 or (seq_len is not None and not separable(d_k, seq_len, rel_tol)), str(error)
        return
    used = first.seq_len
    assert seq_len is None or used == seq_len
    assert separable(d_k, used, rel_tol), (d_k, used)  # would fail if the old check (seq_len != d_k) came back
    assert 1 - 1 / math.sqrt(d_k) > 2 * rel_tol  # a missing scale must be told from 1/sqrt(d_k)
    for attention, verdict in SUSPECTS:
        diagnosis = diagnose_attention(attention, d_k=d_k, seq_len=seq_len, rel_tol=rel_tol)
        assert diagnosis.verdict == verdict, (d_k, used, diagnosis.summary())


@settings(max_examples=40, deadline=None)
@given(d_k=st.integers(1, 300), seq_len=st.one_of(st.none(), st.integers(2, 300)))
def test_probe_separates_or_refuses(d_k, seq_len):
    check_probe(d_k, seq_len)


@settings(max_examples=40, deadline=None)
@given(d_k=st.integers(2, 300), offset=st.integers(-8, 8))
def test_probe_near_the_diagonal(d_k, offset):
    # d_k close to seq_len is where the value-width slip used to pass as correct
    check_probe(d_k, max(2, d_k + offset))


@pytest.mark.parametrize("d_k, seq_len", [(36, 32), (30, 32), (64, 56), (64, 64)])
def test_the_old_blind_spots_are_refused(d_k, seq_len):
    # at these points rel_tol = 0.1 let 1/sqrt(seq_len) pass for 1/sqrt(d_k): the
    # value-width slip was diagnosed "correct"
    with pytest.raises(ValueError, match="seq_len"):
        diagnose_attention(value_width_attention, d_k=d_k, seq_len=seq_len)
    diagnosis = diagnose_attention(value_width_attention, d_k=d_k)  # an automatic length separates them
    assert diagnosis.verdict == diagnostics.VALUE_WIDTH_SCALE, diagnosis.summary()


def test_probe_length_and_its_refusals():
    assert diagnostics.probe_length(64) == 32
    assert diagnostics.probe_length(32) == 16
    assert diagnostics.probe_length(2) == 32
    for d_k in range(2, 2000):
        assert separable(d_k, diagnostics.probe_length(d_k), 0.1)
    with pytest.raises(ValueError, match="d_k"):
        diagnostics.probe_length(1)
    with pytest.raises(ValueError, match="d_k"):
        diagnose_attention(scaled_dot_product_attention, d_k=1)
    with pytest.raises(ValueError, match="rel_tol"):
        diagnostics.probe_length(64, rel_tol=0.45)  # no length can be that far from both 1/8 and 1
