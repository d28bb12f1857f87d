"""helpers.train_recall_runs(learn_temperature=...): a learnable temperature e^τ on top of the scale."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from helpers import RecallModel, scaled_dot_product_attention, train_recall_runs
from helpers.device import effective_seed
from helpers.training import train

STEPS = 30
FIELDS = ("loss", "accuracy", "attention_on_answer", "logit_std", "temperature")


class TemperatureRecallModel(RecallModel):
    """The reference: RecallModel whose logits are multiplied by e^τ, a learnable scalar that starts at 0."""

    def __init__(self, scale: float | None = None) -> None:
        super().__init__(scale=scale)
        self.tau = nn.Parameter(torch.zeros(()))  # no random draw: the other parameters are RecallModel's

    def forward(self, pair_keys, pair_values, query):
        memory = (self.key_embedding(pair_keys) + self.value_embedding(pair_values)) / math.sqrt(2.0)
        q = self.w_q(self.key_embedding(query)).unsqueeze(1) * self.tau.exp()  # e^τ q·k = (e^τ q)·k
        output, weights = scaled_dot_product_attention(q, self.w_k(memory), self.w_v(memory), scale=self.scale)
        return self.readout(output.squeeze(1)), weights.squeeze(1)


@pytest.mark.parametrize(("optimizer", "lr"), [("adam", 1e-2), ("sgd", 0.5)])
def test_a_learnable_temperature_follows_the_single_model(optimizer, lr):
    seed = 3
    history = train_recall_runs([None, 1 / 64], [lr] * 2, [seed] * 2, optimizer, steps=STEPS, learn_temperature=True)
    for run, scale in enumerate([None, 1 / 64]):
        torch.manual_seed(effective_seed(seed))
        model = TemperatureRecallModel(scale)
        opt = (torch.optim.Adam if optimizer == "adam" else torch.optim.SGD)(model.parameters(), lr=lr)
        single = train(model, opt, STEPS, seed=seed)
        batched = history.loss[run].tolist()
        assert max(abs(a - b) / b for a, b in zip(batched, single.loss, strict=True)) < 1e-4, scale
        # e^τ moved, and to where the single model's τ went (the history records it before each update)
        assert abs(history.temperature[run, -1].item() - 1) > 1e-3
        assert abs(math.log(history.temperature[run, -1].item()) - model.tau.item()) < 0.05


def test_fixed_runs_are_bit_identical_beside_learnable_ones():
    scales, lrs, seeds = [None, 1 / 64, None], [1e-2, 3e-3, 1e-2], [0, 1, 0]
    mixed = train_recall_runs(scales, lrs, seeds, steps=12, learn_temperature=[False, False, True])
    plain = train_recall_runs(scales[:2], lrs[:2], seeds[:2], steps=12)
    for field in FIELDS[:-1]:
        assert torch.equal(getattr(mixed, field)[:2], getattr(plain, field)), field
    assert torch.equal(mixed.temperature[:2], torch.ones(2, 12)) and torch.equal(plain.temperature, torch.ones(2, 12))
    assert not torch.equal(mixed.loss[2], mixed.loss[0])  # the learnable run differs from its fixed twin
    assert mixed.temperature[2, 0].item() == 1.0  # it starts at e^0


def test_a_learnable_temperature_moves_the_logit_spread_with_it():
    history = train_recall_runs([None], [3e-2], [0], steps=20, learn_temperature=[True])
    assert history.temperature.shape == (1, 20) and (history.temperature > 0).all()
    assert not torch.equal(history.temperature[0], torch.ones(20))


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"learn_temperature": "yes"}, TypeError),
        ({"learn_temperature": [1]}, TypeError),
        ({"learn_temperature": [True, False]}, ValueError),
        ({"learn_temperature": []}, ValueError),
    ],
)
def test_bad_learn_temperature_names_the_argument(kwargs, error):
    with pytest.raises(error, match="learn_temperature"):
        train_recall_runs([None], [0.1], [0], steps=2, **kwargs)
