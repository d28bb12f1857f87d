"""helpers.online: block-wise softmax and attention equal the ordinary ones."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import online_attention, online_softmax, scaled_dot_product_attention


@settings(max_examples=50, deadline=None)
@given(
    rows=st.integers(1, 4),
    length=st.integers(1, 70),
    block=st.integers(1, 80),
    spread=st.floats(0.1, 300.0),
    seed=st.integers(0, 2**16),
)
def test_online_softmax_equals_softmax(rows, length, block, spread, seed):
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, length, generator=generator, dtype=torch.float64) * spread
    torch.testing.assert_close(online_softmax(logits, block), torch.softmax(logits, dim=-1))


def test_online_softmax_handles_minus_infinity_and_huge_logits():
    logits = torch.tensor([[0.0, -float("inf"), 1.0, -float("inf")], [1000.0, 999.0, -1000.0, 0.0]])
    torch.testing.assert_close(online_softmax(logits, 1), torch.softmax(logits, dim=-1))
    # a first block of -inf only must not poison the running sum with NaN
    torch.testing.assert_close(online_softmax(logits, 2), torch.softmax(logits, dim=-1))


@pytest.mark.parametrize("use_exp2", [False, True])
@pytest.mark.parametrize("block_size", [1, 7, 64, 1000])
def test_online_attention_equals_attention(use_exp2, block_size):
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, n, 16, generator=generator, dtype=torch.float64) for n in (5, 50, 50))
    for scale in (None, 0.01, 1.0):
        expected, _ = scaled_dot_product_attention(q, k, v, scale=scale)
        torch.testing.assert_close(
            online_attention(q, k, v, scale=scale, block_size=block_size, use_exp2=use_exp2), expected
        )


def test_online_attention_float32_large_logits():
    # logits with a spread of about 70: exp would overflow float32 without the running max
    generator = torch.Generator().manual_seed(1)
    q, k = (torch.randn(4, 128, 64, generator=generator) * 3 for _ in range(2))
    v = torch.randn(4, 128, 64, generator=generator)
    expected, _ = scaled_dot_product_attention(q.double(), k.double(), v.double(), scale=1.0)
    got = online_attention(q, k, v, scale=1.0, block_size=32, use_exp2=True)
    assert got.isfinite().all()
    torch.testing.assert_close(got.double(), expected, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("block_size, error", [(0, ValueError), (1.5, TypeError), (True, TypeError)])
def test_bad_block_size(block_size, error):
    with pytest.raises(error, match="block_size"):
        online_softmax(torch.zeros(2, 3), block_size)
    with pytest.raises(error, match="block_size"):
        online_attention(torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(4, 2), block_size=block_size)


def test_bad_inputs_name_the_argument():
    with pytest.raises(TypeError, match="logits"):
        online_softmax(torch.zeros(3, dtype=torch.int64))
    with pytest.raises(ValueError, match="logits"):
        online_softmax(torch.zeros(2, 0))
    with pytest.raises(ValueError, match="d_k"):
        online_attention(torch.zeros(2, 3), torch.zeros(4, 5), torch.zeros(4, 2))
    with pytest.raises(ValueError, match="scale"):
        online_attention(torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(4, 2), scale=-1.0)
    with pytest.raises(TypeError, match="use_exp2"):
        online_attention(torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(4, 2), use_exp2=1)
