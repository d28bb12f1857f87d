"""helpers.attention against torch's own scaled_dot_product_attention."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import (
    attention_logits,
    buggy_attention_no_scale,
    buggy_attention_scale_after_softmax,
    scaled_dot_product_attention,
    softmax_backward,
    softmax_entropy,
)

# Tolerances per dtype: float16/bfloat16 round each stored value to 11/8 bits.
TOLERANCE = {
    torch.float64: dict(atol=1e-12, rtol=1e-10),
    torch.float32: dict(atol=1e-5, rtol=1e-4),
    torch.float16: dict(atol=3e-3, rtol=3e-3),
    torch.bfloat16: dict(atol=2.5e-2, rtol=2.5e-2),
}
DTYPES = list(TOLERANCE)


def make_qkv(batch, L, S, E, Ev, dtype=torch.float32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, L, E, generator=generator, dtype=torch.float64)
    k = torch.randn(*batch, S, E, generator=generator, dtype=torch.float64)
    v = torch.randn(*batch, S, Ev, generator=generator, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def assert_matches_torch(q, k, v, **kwargs):
    ours, weights = scaled_dot_product_attention(q, k, v, **kwargs)
    reference = F.scaled_dot_product_attention(q, k, v, **kwargs)
    assert ours.shape == reference.shape
    assert ours.dtype == reference.dtype == q.dtype
    torch.testing.assert_close(ours, reference, **TOLERANCE[q.dtype])
    return ours, weights


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "batch, L, S, E, Ev",
    [((), 1, 1, 1, 1), ((), 5, 7, 8, 3), ((2,), 4, 4, 16, 16), ((2, 3), 6, 9, 64, 32), ((1, 2, 2), 3, 5, 4, 6)],
)
def test_matches_torch_over_shapes(dtype, batch, L, S, E, Ev):
    q, k, v = make_qkv(batch, L, S, E, Ev, dtype)
    _, weights = assert_matches_torch(q, k, v)
    assert weights.shape == (*batch, L, S)
    torch.testing.assert_close(weights.double().sum(-1), torch.ones(*batch, L, dtype=torch.float64), **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.01, 0.125, 1.0, 3.0])
def test_matches_torch_with_explicit_scale(dtype, scale):
    q, k, v = make_qkv((2,), 5, 6, 16, 8, dtype, seed=1)
    assert_matches_torch(q, k, v, scale=scale)


def test_default_scale_is_one_over_sqrt_query_width():
    q, k, v = make_qkv((), 4, 5, 36, 2, torch.float64)
    default, _ = scaled_dot_product_attention(q, k, v)
    explicit, _ = scaled_dot_product_attention(q, k, v, scale=1 / 6)
    torch.testing.assert_close(default, explicit, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("L, S", [(4, 4), (3, 6), (6, 3)])
def test_causal(dtype, L, S):
    q, k, v = make_qkv((2, 2), L, S, 8, 4, dtype, seed=2)
    _, weights = assert_matches_torch(q, k, v, is_causal=True)
    upper = torch.ones(L, S, dtype=torch.bool).triu(diagonal=1)
    assert (weights[..., upper] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_shape", [(5, 7), (1, 7), (2, 1, 5, 7), (2, 3, 5, 7), (3, 1, 7)])
def test_bool_mask_broadcasts(dtype, mask_shape):
    q, k, v = make_qkv((2, 3), 5, 7, 8, 4, dtype, seed=3)
    mask = torch.rand(mask_shape, generator=torch.Generator().manual_seed(4)) > 0.3
    mask[..., 0] = True  # every row keeps at least one key
    _, weights = assert_matches_torch(q, k, v, attn_mask=mask)
    assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_float_mask_is_added_to_logits(dtype):
    q, k, v = make_qkv((2,), 5, 7, 8, 4, dtype, seed=5)
    bias = torch.randn(5, 7, generator=torch.Generator().manual_seed(6)).to(dtype)
    bias[:, 3] = float("-inf")
    _, weights = assert_matches_torch(q, k, v, attn_mask=bias)
    assert (weights[..., 3] == 0).all()


@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.float32])
def test_fully_masked_row_gives_zeros_like_torch(mask_dtype):
    q, k, v = make_qkv((), 3, 5, 4, 2)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    if mask_dtype != torch.bool:
        mask = torch.zeros(3, 5).masked_fill(~mask, float("-inf"))
    out, weights = assert_matches_torch(q, k, v, attn_mask=mask)
    assert (weights[1] == 0).all() and (out[1] == 0).all()
    assert not weights.isnan().any()


def test_non_contiguous_inputs():
    q, k, v = make_qkv((3,), 8, 6, 10, 12, torch.float64, seed=7)
    q_t = q.transpose(0, 1).contiguous().transpose(0, 1)  # same values, other strides
    k_s, v_s = k[:, ::2], v[:, ::2, ::3]
    assert not (q_t.is_contiguous() or k_s.is_contiguous() or v_s.is_contiguous())
    assert_matches_torch(q_t, k_s, v_s)
    assert_matches_torch(q.mT.contiguous().mT, k, v)


def test_broadcast_batch_dims():
    q, _, _ = make_qkv((2, 3), 4, 5, 8, 4, seed=8)
    _, k, v = make_qkv((1, 3), 4, 5, 8, 4, seed=9)
    out, weights = assert_matches_torch(q, k, v)
    assert out.shape == (2, 3, 4, 4) and weights.shape == (2, 3, 4, 5)


def test_gradients_match_torch():
    q, k, v = make_qkv((2,), 4, 6, 8, 3, torch.float64, seed=10)
    grads = []
    for attention in (lambda *a: scaled_dot_product_attention(*a)[0], F.scaled_dot_product_attention):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        attention(*leaves).square().sum().backward()
        grads.append([t.grad for t in leaves])
    for ours, theirs in zip(*grads, strict=True):
        torch.testing.assert_close(ours, theirs)


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    L=st.integers(1, 9),
    S=st.integers(1, 9),
    E=st.integers(1, 33),
    Ev=st.integers(1, 9),
    scale=st.one_of(st.none(), st.floats(1e-3, 10.0)),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_matches_torch_property(batch, L, S, E, Ev, scale, causal, seed):
    q, k, v = make_qkv(tuple(batch), L, S, E, Ev, torch.float64, seed)
    out, weights = assert_matches_torch(q, k, v, scale=scale, is_causal=causal)
    assert (weights >= 0).all()


def test_logits_scale_acts_before_softmax():
    q, k, _ = make_qkv((), 4, 5, 64, 1, torch.float64, seed=11)
    raw = attention_logits(q, k, scale=1.0)
    torch.testing.assert_close(attention_logits(q, k), raw / 8, atol=0, rtol=1e-15)


def test_bug_scale_after_softmax_shrinks_rows_uniformly():
    q, k, v = make_qkv((2,), 4, 5, 16, 3, torch.float64, seed=13)
    out, weights = buggy_attention_scale_after_softmax(q, k, v)
    unscaled_out, unscaled_weights = buggy_attention_no_scale(q, k, v)
    torch.testing.assert_close(weights.sum(-1), torch.full((2, 4), 0.25, dtype=torch.float64))
    torch.testing.assert_close(out, unscaled_out / 4)
    torch.testing.assert_close(weights * 4, unscaled_weights)


def test_softmax_entropy():
    uniform = torch.full((3, 10), 0.1, dtype=torch.float64)
    torch.testing.assert_close(softmax_entropy(uniform), torch.full((3,), math.log(10), dtype=torch.float64))
    one_hot = torch.eye(4)
    assert (softmax_entropy(one_hot) == 0).all()
    p = torch.tensor([[0.5, 0.25], [0.5, 0.75]])
    expected = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    torch.testing.assert_close(softmax_entropy(p, dim=0)[1], torch.tensor(expected))


# ---- bad input: a clear error that names the argument --------------------------------


def good():
    return make_qkv((2,), 4, 5, 8, 3)


@pytest.mark.parametrize(
    "change, error, words",
    [
        (lambda q, k, v: (q, k[..., :4], v), ValueError, ["query", "key", "d_k", "(2, 4, 8)", "(2, 5, 4)"]),
        (lambda q, k, v: (q, k, v[:, :3]), ValueError, ["key", "value", "(2, 5, 8)", "(2, 3, 3)"]),
        (lambda q, k, v: (q.long(), k, v), TypeError, ["query", "floating", "int64"]),
        (lambda q, k, v: (q, k.int(), v), TypeError, ["key", "floating"]),
        (lambda q, k, v: (q, k, v > 0), TypeError, ["value", "floating"]),
        (lambda q, k, v: (q, k.double(), v), TypeError, ["query", "key", "dtype", "float64"]),
        (lambda q, k, v: (q, k, v.half()), TypeError, ["value", "dtype", "float16"]),
        (lambda q, k, v: (q, k, v.to("meta")), ValueError, ["value", "device", "meta"]),
        (lambda q, k, v: (q, k.to("meta"), v), ValueError, ["key", "device", "meta"]),
        (lambda q, k, v: (q[0, 0], k, v), ValueError, ["query", "at least 2", "(8,)"]),
        (lambda q, k, v: (q, k[0, 0], v), ValueError, ["key", "at least 2"]),
        (lambda q, k, v: (q, k, v[0, 0]), ValueError, ["value", "at least 2"]),
        (lambda q, k, v: (q.expand(3, 2, 4, 8)[:, :1].repeat(1, 3, 1, 1), k, v), ValueError, ["batch", "broadcast"]),
        (lambda q, k, v: (q.tolist(), k, v), TypeError, ["query", "Tensor", "list"]),
    ],
)
def test_bad_inputs(change, error, words):
    with pytest.raises(error) as info:
        scaled_dot_product_attention(*change(*good()))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), -float("inf")])
def test_bad_scale_values(scale):
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention(*good(), scale=scale)
    with pytest.raises(ValueError, match="scale"):
        attention_logits(*good()[:2], scale=scale)


@pytest.mark.parametrize("scale", ["0.5", torch.tensor(0.5), True, [1.0]])
def test_bad_scale_types(scale):
    with pytest.raises(TypeError, match="scale"):
        scaled_dot_product_attention(*good(), scale=scale)


@pytest.mark.parametrize(
    "mask, error, words",
    [
        (torch.ones(4, 6, dtype=torch.bool), ValueError, ["attn_mask", "(4, 6)", "(2, 4, 5)"]),
        (torch.ones(3, 4, 5, dtype=torch.bool), ValueError, ["attn_mask", "(3, 4, 5)"]),
        (torch.ones(4, 5, dtype=torch.int64), TypeError, ["attn_mask", "bool", "int64"]),
        (torch.zeros(4, 5, dtype=torch.float64), TypeError, ["attn_mask", "float32", "float64"]),
        (torch.ones(4, 5, dtype=torch.bool, device="meta"), ValueError, ["attn_mask", "device"]),
        ([[True] * 5] * 4, TypeError, ["attn_mask", "Tensor"]),
    ],
)
def test_bad_masks(mask, error, words):
    with pytest.raises(error) as info:
        scaled_dot_product_attention(*good(), attn_mask=mask)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_mask_and_causal_together():
    with pytest.raises(ValueError, match="attn_mask.*is_causal"):
        scaled_dot_product_attention(*good(), attn_mask=torch.ones(4, 5, dtype=torch.bool), is_causal=True)
    with pytest.raises(TypeError, match="is_causal"):
        scaled_dot_product_attention(*good(), is_causal=1)


def test_bugs_validate_too():
    q, k, v = good()
    for bug in (buggy_attention_no_scale, buggy_attention_scale_after_softmax):
        with pytest.raises(ValueError, match="d_k"):
            bug(q, k[..., :4], v)


def test_softmax_entropy_bad_input():
    with pytest.raises(TypeError, match="p"):
        softmax_entropy([0.5, 0.5])
    with pytest.raises(TypeError, match="floating"):
        softmax_entropy(torch.tensor([1, 0]))
    with pytest.raises(ValueError, match="0-dimensional"):
        softmax_entropy(torch.tensor(1.0))


@pytest.mark.parametrize("spread", [0.1, 1.0, 30.0])
def test_softmax_backward_matches_autograd(spread):
    generator = torch.Generator().manual_seed(14)
    logits = (torch.randn(3, 4, 9, generator=generator, dtype=torch.float64) * spread).requires_grad_()
    upstream = torch.randn(3, 4, 9, generator=generator, dtype=torch.float64)
    weights = torch.softmax(logits, dim=-1)
    (expected,) = torch.autograd.grad(weights, logits, upstream)
    torch.testing.assert_close(softmax_backward(weights.detach(), upstream), expected)
    jacobian = torch.autograd.functional.jacobian(lambda z: torch.softmax(z, dim=-1), logits[0, 0].detach())
    p = weights[0, 0].detach()
    torch.testing.assert_close(jacobian, torch.diag(p) - torch.outer(p, p))


def test_softmax_backward_bad_input():
    with pytest.raises(TypeError, match="grad_weights"):
        softmax_backward(torch.ones(3) / 3, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="dtype"):
        softmax_backward(torch.ones(3) / 3, torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"\(4,\).*\(3,\)"):
        softmax_backward(torch.ones(3) / 3, torch.ones(4))
    with pytest.raises(TypeError, match="weights"):
        softmax_backward(torch.ones(3, dtype=torch.int64), torch.ones(3))


def test_naive_softmax_matches_until_it_overflows():
    from helpers import naive_softmax

    small = torch.randn(4, 16, generator=torch.Generator().manual_seed(15))
    torch.testing.assert_close(naive_softmax(small), torch.softmax(small, dim=-1))
    large = torch.tensor([[0.0, 12.0]], dtype=torch.float16)  # exp(12) > 65504
    assert naive_softmax(large).isnan().any() and torch.softmax(large.float(), dim=-1).isfinite().all()
    with pytest.raises(TypeError, match="logits"):
        naive_softmax(torch.tensor([1, 2]))
