"""helpers.training: the associative-recall task, the one-head model and its training loop."""

from __future__ import annotations

import math

import pytest
import torch

from helpers import (
    RecallBatch,
    RecallModel,
    TrainHistory,
    recall_batch,
    scaled_dot_product_attention,
    steps_to_accuracy,
    train,
    train_recall,
)


def test_recall_batch_shapes_and_meaning():
    batch = recall_batch(50, n_pairs=6, n_keys=10, n_values=7, generator=torch.Generator().manual_seed(0))
    assert isinstance(batch, RecallBatch)
    assert batch.pair_keys.shape == batch.pair_values.shape == (50, 6)
    assert batch.query.shape == batch.target.shape == batch.position.shape == (50,)
    assert all(t.dtype == torch.int64 for t in batch)
    rows = torch.arange(50)
    assert torch.equal(batch.pair_keys[rows, batch.position], batch.query)
    assert torch.equal(batch.pair_values[rows, batch.position], batch.target)
    # keys are distinct within an example, so the answer is unique
    assert all(len(set(row.tolist())) == 6 for row in batch.pair_keys)
    assert batch.pair_keys.max() < 10 and batch.pair_values.max() < 7 and batch.pair_keys.min() >= 0


def test_recall_batch_is_deterministic_given_a_seed():
    a = recall_batch(8, generator=torch.Generator().manual_seed(3))
    b = recall_batch(8, generator=torch.Generator().manual_seed(3))
    c = recall_batch(8, generator=torch.Generator().manual_seed(4))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, y) for x, y in zip(a, c))


def test_model_shapes_and_default_scale():
    torch.manual_seed(0)
    model = RecallModel(n_keys=12, n_values=5, d_model=16, d_k=8)
    batch = recall_batch(4, n_pairs=3, n_keys=12, n_values=5, generator=torch.Generator().manual_seed(0))
    logits, weights = model(batch.pair_keys, batch.pair_values, batch.query)
    assert logits.shape == (4, 5) and weights.shape == (4, 3)
    torch.testing.assert_close(weights.sum(-1), torch.ones(4))
    # the default scale is 1/sqrt(d_k): the same as passing it explicitly
    explicit = RecallModel(n_keys=12, n_values=5, d_model=16, d_k=8, scale=1 / math.sqrt(8))
    explicit.load_state_dict(model.state_dict())
    torch.testing.assert_close(explicit(batch.pair_keys, batch.pair_values, batch.query)[0], logits)


def test_model_attention_is_the_helpers_attention():
    torch.manual_seed(1)
    model = RecallModel(n_keys=12, n_values=5, d_model=16, d_k=8, scale=0.3)
    batch = recall_batch(4, n_pairs=3, n_keys=12, n_values=5, generator=torch.Generator().manual_seed(1))
    memory = (model.key_embedding(batch.pair_keys) + model.value_embedding(batch.pair_values)) / math.sqrt(2)
    q = model.w_q(model.key_embedding(batch.query))[:, None]
    _, expected = scaled_dot_product_attention(q, model.w_k(memory), model.w_v(memory), scale=0.3)
    torch.testing.assert_close(model(batch.pair_keys, batch.pair_values, batch.query)[1], expected[:, 0])


def test_queries_and_keys_have_unit_variance_at_initialisation():
    torch.manual_seed(0)
    model = RecallModel(n_keys=64, n_values=64, d_model=256, d_k=256)
    with torch.no_grad():
        q = model.w_q(model.key_embedding.weight)
        assert 0.7 < q.var().item() < 1.3


def test_train_recall_is_deterministic_given_a_seed():
    a = train_recall(seed=5, steps=5)
    b = train_recall(seed=5, steps=5)
    c = train_recall(seed=6, steps=5)
    assert a == b and a != c
    assert len(a.loss) == len(a.accuracy) == len(a.attention_on_answer) == 5


def test_a_tiny_run_learns():
    history = train_recall(optimizer="adam", lr=1e-2, seed=0, steps=150, n_pairs=4, n_keys=8, n_values=8, d_model=32, d_k=32)
    assert sum(history.loss[-10:]) / 10 < 0.5 * sum(history.loss[:10]) / 10
    assert sum(history.accuracy[-10:]) / 10 > 0.8
    assert sum(history.attention_on_answer[-10:]) / 10 > 0.5


def test_train_with_own_model_and_optimizer():
    torch.manual_seed(0)
    model = RecallModel(n_keys=8, n_values=8, d_model=16, d_k=16)
    history = train(model, torch.optim.SGD(model.parameters(), lr=0.1), steps=3, batch_size=4, n_pairs=4, seed=0)
    assert isinstance(history, TrainHistory) and len(history.loss) == 3


def test_steps_to_accuracy():
    history = TrainHistory(loss=[0.0] * 6, accuracy=[0.0, 0.5, 1.0, 1.0, 1.0, 1.0], attention_on_answer=[0.0] * 6)
    assert steps_to_accuracy(history, 1.0, window=1) == 3
    assert steps_to_accuracy(history, 1.0, window=2) == 4
    assert steps_to_accuracy(history, 0.75, window=2) == 3
    assert steps_to_accuracy(history, 1.0, window=10) is None
    assert steps_to_accuracy(TrainHistory(loss=[1.0], accuracy=[0.0], attention_on_answer=[0.0]), 0.5, window=1) is None


@pytest.mark.parametrize(
    ("call", "error", "word"),
    [
        (lambda: recall_batch(0), ValueError, "batch_size"),
        (lambda: recall_batch(2.0), TypeError, "batch_size"),
        (lambda: recall_batch(2, n_pairs=5, n_keys=4), ValueError, "n_pairs"),
        (lambda: recall_batch(2, generator=3), TypeError, "generator"),
        (lambda: RecallModel(d_k=0), ValueError, "d_k"),
        (lambda: RecallModel(scale=0.0), ValueError, "scale"),
        (lambda: RecallModel(scale="1"), TypeError, "scale"),
        (lambda: RecallModel()(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2)), TypeError, "pair_keys"),
        (lambda: RecallModel()(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, dtype=torch.long)), ValueError, "pair_values"),
        (lambda: RecallModel()(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, dtype=torch.long)), ValueError, "query"),
        (lambda: train_recall(optimizer="rmsprop"), ValueError, "optimizer"),
        (lambda: train_recall(lr=-1.0), ValueError, "lr"),
        (lambda: train_recall(seed=-1), ValueError, "seed"),
        (lambda: train_recall(steps=0), ValueError, "steps"),
        (lambda: train(torch.nn.Linear(2, 2), None, steps=1), TypeError, "model"),
        (lambda: train(RecallModel(), None, steps=1), TypeError, "optimizer"),
        (lambda: steps_to_accuracy([0.5], 0.5), TypeError, "history"),
        (lambda: steps_to_accuracy(TrainHistory(), 1.5), ValueError, "target"),
        (lambda: steps_to_accuracy(TrainHistory(), 0.5, window=0), ValueError, "window"),
    ],
)
def test_bad_input_names_the_argument(call, error, word):
    with pytest.raises(error, match=word):
        call()


def test_moving_average():
    from helpers import moving_average

    torch.testing.assert_close(moving_average([1.0, 2.0, 3.0, 4.0], window=2), torch.tensor([1.0, 1.5, 2.5, 3.5]))
    torch.testing.assert_close(moving_average([2.0, 4.0], window=10), torch.tensor([2.0, 3.0]))
    with pytest.raises(ValueError, match="window"):
        moving_average([1.0], window=0)
    with pytest.raises(ValueError, match="one curve"):
        moving_average([[1.0, 2.0]])
