"""helpers.controls: the shared-value task is recall with every pair holding the answer."""

from __future__ import annotations

import pytest
import torch

from helpers.controls import share_the_answer, train_shared_value
from helpers.training import recall_batch, train_recall


def test_batch_is_recall_with_shared_values():
    recall = recall_batch(64, generator=torch.Generator().manual_seed(3))
    shared = share_the_answer(recall_batch(64, generator=torch.Generator().manual_seed(3)))
    for name in ("pair_keys", "query", "target", "position"):
        assert torch.equal(getattr(shared, name), getattr(recall, name)), name
    assert torch.equal(shared.pair_values, recall.target[:, None].expand(-1, 16))


def test_any_weights_lead_to_the_answer():
    # the value embedding each pair carries is the target's: uniform or one-hot attention reads the same value
    batch = share_the_answer(recall_batch(16, generator=torch.Generator().manual_seed(0)))
    assert (batch.pair_values == batch.target[:, None]).all()


def test_training_is_deterministic_and_learns():
    first = train_shared_value(seed=1, steps=40)
    again = train_shared_value(seed=1, steps=40)
    assert first.loss == again.loss
    assert sum(first.loss[-10:]) / 10 < 0.5 * sum(first.loss[:10]) / 10  # fails if nothing trains
    assert len(first.accuracy) == len(first.attention_on_answer) == 40


def test_same_initial_model_as_recall():
    # step 1 is measured before any update, on the same queries and targets: only the pair values differ
    shared, recall = train_shared_value(seed=2, steps=1), train_recall(seed=2, steps=1)
    assert shared.loss[0] != recall.loss[0]
    assert shared.loss[0] == pytest.approx(recall.loss[0], rel=0.2)  # both near log(32) at initialisation


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="optimizer"):
        train_shared_value(optimizer="rmsprop", steps=1)
    with pytest.raises(ValueError, match="lr"):
        train_shared_value(lr=-1.0, steps=1)
    with pytest.raises(ValueError, match="steps"):
        train_shared_value(steps=0)
