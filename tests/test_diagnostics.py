"""helpers.diagnostics: the probe tells correct attention from the scale bugs."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from helpers import (
    buggy_attention_no_scale,
    buggy_attention_scale_after_softmax,
    diagnose_attention,
    implied_logit_scale,
    scaled_dot_product_attention,
)
from helpers import diagnostics


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
