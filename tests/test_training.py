"""helpers.training: the associative-recall task, the one-head model and its training loop."""

from __future__ import annotations

import functools
import math

import pytest
import torch

from helpers import (
    RecallModel,
    attention_logits,
    scaled_dot_product_attention,
    steps_to_accuracy,
    train_recall,
    train_recall_runs,
)
from helpers.recall_runs import RunsHistory, init_recall_runs
from helpers.run_stack import StackedAdam, StackedSGD
from helpers.training import RecallBatch, TrainHistory, recall_batch, train


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
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a, c, strict=True))


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
    history = train_recall(
        optimizer="adam", lr=1e-2, seed=0, steps=150, n_pairs=4, n_keys=8, n_values=8, d_model=32, d_k=32
    )
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
        (
            lambda: RecallModel()(
                torch.zeros(2, 3, dtype=torch.long),
                torch.zeros(2, 4, dtype=torch.long),
                torch.zeros(2, dtype=torch.long),
            ),
            ValueError,
            "pair_values",
        ),
        (
            lambda: RecallModel()(
                torch.zeros(2, 3, dtype=torch.long),
                torch.zeros(2, 3, dtype=torch.long),
                torch.zeros(3, dtype=torch.long),
            ),
            ValueError,
            "query",
        ),
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


# ---------------------------------------------------------------------------
# Many runs as one program: train_recall_runs


def test_init_recall_runs_is_recall_model_bit_for_bit():
    before = torch.get_rng_state()
    stacked = init_recall_runs([3, 0, 3], n_keys=12, n_values=5, d_model=16, d_k=8)
    assert torch.equal(torch.get_rng_state(), before)  # the caller's random state is left alone
    for r, seed in enumerate([3, 0, 3]):
        torch.manual_seed(seed)
        model = RecallModel(n_keys=12, n_values=5, d_model=16, d_k=8)
        state = model.state_dict()
        assert list(stacked) == list(state)
        for name, tensor in state.items():
            assert stacked[name].shape == (3, *tensor.shape)
            assert torch.equal(stacked[name][r], tensor), name


@pytest.mark.parametrize(
    ("stacked", "reference"),
    [(StackedSGD, torch.optim.SGD), (StackedAdam, functools.partial(torch.optim.Adam, fused=True))],
)
def test_stacked_optimizers_are_torch_optimizers_bit_for_bit(stacked, reference):
    # Same gradient in, same parameter out, to the last bit: per-run learning rates (runs 1 and 2
    # share one, so they are updated as one block), Adam's bias corrections and its arithmetic are
    # torch's own: its fused kernel, which torch.optim.Adam(fused=True) calls.
    generator = torch.Generator().manual_seed(0)
    lrs, shapes, steps = [1e-2, 3e-3, 3e-3, 0.7], [(4, 5, 7), (4, 4)], 6
    params = [torch.randn(shape, generator=generator) for shape in shapes]
    singles = [[p[r].clone() for p in params] for r in range(4)]
    optimizer = stacked(params, lrs)
    references = [reference(singles[r], lr=lrs[r]) for r in range(4)]
    for step in range(steps):
        grads = [torch.randn(shape, generator=generator) * 10.0**-step for shape in shapes]  # down to 1e-5
        optimizer.step(grads)
        for r in range(4):
            for p, g in zip(singles[r], grads, strict=True):
                p.grad = g[r].clone()
            references[r].step()
    for r in range(4):
        for p, single in zip(params, singles[r], strict=True):
            assert torch.equal(p[r], single)


# Batched against single runs. The batched pass computes the model's function in another
# order (module docstring of helpers.training: W_kᵀ q against the vocabulary instead of W_k
# against every memory row; the chain rule written out; Adam's fused kernel where the single
# run uses torch.optim.Adam's default), so its float32 results differ from the single run's
# in the last bits from the first step on (measured: <= 7e-8 relative at step 0). Training
# then carries that difference along: with SGD, and with Adam at the small scale 1/d_k, it
# stays below 3e-7 relative over 30 steps (5 seeds, two rates each), so RTOL = 1e-5 leaves a
# margin of 30x. Adam at 1/sqrt(d_k) amplifies it more, because Adam divides each gradient by
# its own running size, so a component whose gradient is tiny still moves by ~lr and its
# last-bit noise with it: the batched runs reached 1.4e-6, and the single run against ITSELF
# with its initial parameters moved by one float32 ulp reaches 1.3e-5 within 30 steps. That
# is the dynamics, not the batching: 5e-5 there.
RTOL = {("sgd", "1/sqrt(d_k)"): 1e-5, ("sgd", "1/d_k"): 1e-5, ("adam", "1/sqrt(d_k)"): 5e-5, ("adam", "1/d_k"): 1e-5}
STEPS = 30
SCALES = {"1/sqrt(d_k)": None, "1/d_k": 1 / 64}
LRS = {"sgd": (0.5, 0.2), "adam": (1e-2, 3e-3)}  # the chapters' rates, and a second one to route per run


def relative_difference(batched: list[float], single: list[float]) -> float:
    return max(abs(a - b) / abs(b) for a, b in zip(batched, single, strict=True))


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_batched_runs_follow_their_single_runs(optimizer):
    # One grid mixing scales, learning rates and seeds (seed 0 twice, with another scale and
    # rate), so that each run must get its own of each.
    (big, small), (first, second) = SCALES, LRS[optimizer]
    grid = [(big, first, 0), (big, second, 1), (small, first, 1), (small, second, 0)]
    scales, lrs, seeds = zip(*grid, strict=True)
    history = train_recall_runs([SCALES[s] for s in scales], lrs, seeds, optimizer, steps=STEPS)
    assert isinstance(history, RunsHistory) and len(history) == len(grid)
    for r, (scale, lr, seed) in enumerate(grid):
        single = train_recall(SCALES[scale], optimizer, lr, seed, steps=STEPS)
        batched = history.run(r)
        rtol = RTOL[optimizer, scale]
        assert relative_difference(batched.loss[:1], single.loss[:1]) < 1e-6  # step 0: the same model, one forward pass
        assert relative_difference(batched.loss, single.loss) < rtol, (scale, lr, seed)
        assert relative_difference(batched.attention_on_answer, single.attention_on_answer) < rtol, (scale, lr, seed)
        # accuracy counts argmaxes: a near tie could flip one example; none did here, allow one in the 30 steps
        flips = [abs(a - b) for a, b in zip(batched.accuracy, single.accuracy, strict=True) if a != b]
        assert len(flips) <= 1 and all(f <= 1 / 32 + 1e-6 for f in flips)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_unscaled_batched_runs_follow_their_single_runs_for_a_few_steps(optimizer):
    # Without the scale (c = 1) the attention logits have std ~ sqrt(d_k) = 8, the softmax
    # saturates and training is chaotic: a difference in the last bit grows about 3x per
    # step (measured, batched vs single: 1e-5 by step 4, 6e-4 by step 9, O(1) by step 30
    # with SGD; the single run against itself moved by one ulp does the same). So only the
    # first steps can be compared: 5 steps, rtol 1e-4 (measured <= 1.9e-5, 5 seeds).
    history = train_recall_runs([1.0, 1.0], [LRS[optimizer][0]] * 2, [0, 1], optimizer, steps=5)
    for r, seed in enumerate([0, 1]):
        single = train_recall(1.0, optimizer, LRS[optimizer][0], seed, steps=5)
        assert relative_difference(history.run(r).loss, single.loss) < 1e-4
        assert relative_difference(history.run(r).attention_on_answer, single.attention_on_answer) < 1e-4


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_runs_of_several_widths_and_initial_gains_follow_their_single_runs(optimizer):
    # One program with three widths (each trained as its own stack, in one step loop) and a
    # factor on the initial W_q and W_k: the scale folded into the initialisation (c = 1,
    # qk_gain = d_k**-0.25, logits that start like the scaled model's) and a wide start.
    lr = LRS[optimizer][1]
    grid = [(None, 16, 1.0, 0), (1.0, 64, 64**-0.25, 1), (None, 32, 32**0.25, 2), (None, 64, 1.0, 0)]
    scales, d_ks, gains, seeds = zip(*grid, strict=True)
    history = train_recall_runs(scales, [lr] * 4, seeds, optimizer, steps=STEPS, d_k=d_ks, qk_gain=gains)
    for r, (scale, d_k, gain, seed) in enumerate(grid):
        single = train_recall(scale, optimizer, lr, seed, steps=STEPS, d_k=d_k, qk_gain=gain)
        assert relative_difference(history.run(r).loss[:1], single.loss[:1]) < 1e-6
        assert relative_difference(history.run(r).loss, single.loss) < 5e-5, (scale, d_k, gain)
    # the wide start is wide: its initial logits spread sqrt(d_k) times more than the scaled model's
    assert history.logit_std[2, 0] > 3 * history.logit_std[0, 0]
    # folded into W_q and W_k, the factor gives the scaled model's initial logits (same seed 0 as run 3)
    torch.testing.assert_close(history.logit_std[1, 0], history.logit_std[3, 0], rtol=0.3, atol=0)


def test_qk_gain_multiplies_the_initial_query_and_key_weights():
    plain = init_recall_runs([7], d_k=16, d_model=16)
    gained = init_recall_runs([7], d_k=16, d_model=16, qk_gain=0.5)
    for name in ("w_q.weight", "w_k.weight"):
        torch.testing.assert_close(gained[name], 0.5 * plain[name])
    for name in ("key_embedding.weight", "value_embedding.weight", "w_v.weight", "readout.weight"):
        assert torch.equal(gained[name], plain[name])


@pytest.mark.parametrize(("optimizer", "lr", "huge"), [("sgd", 0.5, 1e6), ("adam", 1e-2, 1e30)])
def test_a_diverging_run_leaves_the_others_alone(optimizer, lr, huge):
    steps = 12
    grid = train_recall_runs([None, 1.0, 1 / 64], [lr, huge, lr], [0, 1, 2], optimizer, steps=steps)
    assert not grid.loss[1].isfinite().all()  # it did diverge (NaN)
    without = train_recall_runs([None, 1 / 64], [lr, lr], [0, 2], optimizer, steps=steps)
    tame = train_recall_runs([None, 1.0, 1 / 64], [lr, lr, lr], [0, 1, 2], optimizer, steps=steps)
    for field in ("loss", "accuracy", "attention_on_answer", "logit_std"):
        others = getattr(grid, field)[[0, 2]]
        assert others.isfinite().all()
        assert torch.equal(others, getattr(without, field)), field  # bit for bit
        assert torch.equal(others, getattr(tame, field)[[0, 2]]), field


def test_runs_history_fields_and_the_attention_statistics():
    scales, seeds = [None, 1.0, 1 / 64], [4, 4, 5]
    history = train_recall_runs(scales, [1e-2] * 3, seeds, "adam", steps=3, n_pairs=6, d_model=16, d_k=16, device="cpu")
    for field in ("loss", "accuracy", "attention_on_answer", "logit_std"):
        tensor = getattr(history, field)
        assert tensor.shape == (3, 3) and tensor.dtype == torch.float32 and tensor.device.type == "cpu"
    run = history.run(1)
    assert isinstance(run, TrainHistory) and run.loss == history.loss[1].tolist() and len(run.accuracy) == 3
    assert history.run(-1) == history.run(2)
    # Step 0, recomputed with the single model on the run's first batch.
    for r, (scale, seed) in enumerate(zip(scales, seeds, strict=True)):
        torch.manual_seed(seed)
        model = RecallModel(d_model=16, d_k=16, scale=scale)
        batch = recall_batch(32, 6, generator=torch.Generator().manual_seed(seed))
        memory = (model.key_embedding(batch.pair_keys) + model.value_embedding(batch.pair_values)) / math.sqrt(2)
        logits = attention_logits(model.w_q(model.key_embedding(batch.query))[:, None], model.w_k(memory), scale)
        torch.testing.assert_close(history.logit_std[r, 0], logits.std().detach(), rtol=1e-5, atol=0)
    assert history.logit_std[1, 0] > 2 * history.logit_std[0, 0]  # unscaled: logits ~sqrt(d_k) = 4x wider


def test_steps_to_accuracy_for_many_runs():
    generator = torch.Generator().manual_seed(0)
    accuracy = (torch.rand(40, 30, generator=generator).cumsum(dim=1) / 12).clamp(max=1.0)
    accuracy = torch.floor(accuracy * 32) / 32  # like a batch of 32
    for target, window in ((0.9, 5), (0.5, 1), (1.0, 20), (0.3, 31)):
        vectorised = steps_to_accuracy(accuracy, target, window)
        assert vectorised.shape == (40,) and vectorised.dtype == torch.float32
        for r in range(40):
            run = TrainHistory(loss=[0.0] * 30, accuracy=accuracy[r].tolist(), attention_on_answer=[0.0] * 30)
            single = steps_to_accuracy(run, target, window)
            assert vectorised[r].item() == (math.inf if single is None else single)
    history = RunsHistory(*[accuracy] * 4)
    assert torch.equal(steps_to_accuracy(history, 0.9, 5), steps_to_accuracy(accuracy, 0.9, 5))
    assert steps_to_accuracy(accuracy, 1.0, 40).isinf().all()


@pytest.mark.parametrize(
    ("call", "error", "word"),
    [
        (lambda: train_recall_runs(1.0, [0.1], [0]), TypeError, "scales"),
        (lambda: train_recall_runs(["1"], [0.1], [0]), TypeError, "scales"),
        (lambda: train_recall_runs([0.0], [0.1], [0]), ValueError, "scales"),
        (lambda: train_recall_runs([None], "0.1", [0]), TypeError, "lrs"),
        (lambda: train_recall_runs([None], [None], [0]), TypeError, "lrs"),
        (lambda: train_recall_runs([None], [0.0], [0]), ValueError, "lrs"),
        (lambda: train_recall_runs([None], [-1.0], [0]), ValueError, "lrs"),
        (lambda: train_recall_runs([None], [math.inf], [0]), ValueError, "lrs"),
        (lambda: train_recall_runs([None], [math.nan], [0]), ValueError, "lrs"),
        (lambda: train_recall_runs([None], torch.ones(1, 1), [0]), ValueError, "lrs"),
        (lambda: train_recall_runs([None, None], [0.1], [0, 1]), ValueError, "lrs"),
        (lambda: train_recall_runs([None], [0.1], [0.5]), TypeError, "seeds"),
        (lambda: train_recall_runs([None], [0.1], [-1]), ValueError, "seeds"),
        (lambda: train_recall_runs([None], [0.1], [0, 1]), ValueError, "seeds"),
        (lambda: train_recall_runs([], [], []), ValueError, "scales"),
        (lambda: train_recall_runs([None], [0.1], [0], optimizer=None), TypeError, "optimizer"),
        (lambda: train_recall_runs([None], [0.1], [0], optimizer="rmsprop"), ValueError, "optimizer"),
        (lambda: train_recall_runs([None], [0.1], [0], steps=0), ValueError, "steps"),
        (lambda: train_recall_runs([None], [0.1], [0], steps=2.0), TypeError, "steps"),
        (lambda: train_recall_runs([None], [0.1], [0], d_k="8"), TypeError, "d_k"),
        (lambda: train_recall_runs([None], [0.1], [0], n_pairs=5, n_keys=4), ValueError, "n_pairs"),
        (lambda: train_recall_runs([None], [0.1], [0], d_k=[8, 16]), ValueError, "d_k"),
        (lambda: train_recall_runs([None], [0.1], [0], d_k=[0]), ValueError, "d_k"),
        (lambda: train_recall_runs([None], [0.1], [0], qk_gain=0.0), ValueError, "qk_gain"),
        (lambda: train_recall_runs([None], [0.1], [0], qk_gain=[1.0, 2.0]), ValueError, "qk_gain"),
        (lambda: train_recall_runs([None], [0.1], [0], qk_gain="1"), TypeError, "qk_gain"),
        (lambda: RecallModel(qk_gain=-1.0), ValueError, "qk_gain"),
        (lambda: init_recall_runs(3), TypeError, "seeds"),
        (lambda: init_recall_runs([]), ValueError, "seeds"),
        (lambda: RunsHistory(*[torch.zeros(2, 3)] * 4).run("0"), TypeError, "index"),
        (lambda: RunsHistory(*[torch.zeros(2, 3)] * 4).run(2), ValueError, "index"),
        (lambda: steps_to_accuracy(torch.zeros(3), 0.5), ValueError, "history"),
        (lambda: steps_to_accuracy(torch.zeros(2, 3), 2.0), ValueError, "target"),
    ],
)
def test_batched_bad_input_names_the_argument(call, error, word):
    with pytest.raises(error, match=word):
        call()
