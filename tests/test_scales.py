"""helpers.scales: attention statistics at initialisation for several logit multipliers."""

from __future__ import annotations

import math

import pytest
import torch

from helpers import attention_statistics_at_init, softmax_backward


def test_returns_one_dict_per_multiplier_with_every_statistic():
    results = attention_statistics_at_init(64, [1.0, 0.125], seed=0)
    assert len(results) == 2
    for result in results:
        assert tuple(result) == ("logit std", "entropy", "max weight", "logit grad norm", "query grad norm")
        assert all(isinstance(value, float) and math.isfinite(value) for value in result.values())


def test_is_reproducible_and_multipliers_share_the_draws():
    first = attention_statistics_at_init(32, [1.0, 0.5], seed=3)
    again = attention_statistics_at_init(32, [0.5], seed=3)
    assert first[1] == again[0]
    # the same scores, multiplied by 0.5: their spread halves exactly
    assert first[1]["logit std"] == pytest.approx(first[0]["logit std"] / 2, rel=1e-6)


def test_inverse_sqrt_scale_gives_unit_logits_and_tiny_multiplier_gives_uniform_rows():
    scaled, tiny = attention_statistics_at_init(256, [256**-0.5, 1e-9], seed=1, batch=2)
    assert scaled["logit std"] == pytest.approx(1.0, abs=0.05)
    assert tiny["entropy"] == pytest.approx(math.log(128), abs=1e-5)
    assert tiny["max weight"] == pytest.approx(1 / 128, rel=1e-4)


def test_query_gradient_matches_autograd():
    # rebuild the same draws and compare the closed form with autograd on the loss sum(p * g)
    d_k, multiplier, seed = 16, 0.3, 5
    result = attention_statistics_at_init(d_k, [multiplier], seed=seed, seq_len=8)[0]
    torch.manual_seed(seed)
    q, k = torch.randn(2, 1, 8, d_k)
    upstream = torch.randn(1, 8, 8)
    q.requires_grad_(True)
    weights = torch.softmax(multiplier * q @ k.transpose(-2, -1), dim=-1)
    (weights * upstream).sum().backward()
    assert result["query grad norm"] == pytest.approx(q.grad.norm(dim=-1).mean().item(), rel=1e-4)
    expected_logit_grad = softmax_backward(weights.detach(), upstream).norm(dim=-1).mean().item()
    assert result["logit grad norm"] == pytest.approx(expected_logit_grad, rel=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "error", "word"),
    [
        ({"d_k": 0}, ValueError, "d_k"),
        ({"d_k": 2.0}, TypeError, "d_k"),
        ({"multipliers": 0.5}, TypeError, "multipliers"),
        ({"multipliers": []}, ValueError, "multipliers"),
        ({"multipliers": [0.0]}, ValueError, "multipliers"),
        ({"multipliers": [math.inf]}, ValueError, "multipliers"),
        ({"multipliers": [True]}, TypeError, "multipliers"),
        ({"batch": 0}, ValueError, "batch"),
        ({"seq_len": "8"}, TypeError, "seq_len"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, word):
    arguments = {"d_k": 8, "multipliers": [1.0], "seed": 0, **kwargs}
    with pytest.raises(error, match=word):
        attention_statistics_at_init(**arguments)
