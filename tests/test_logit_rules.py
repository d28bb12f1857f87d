"""helpers.logit_rules and helpers.sink: QK-norm and a sink logit on the recall model, and chapter 8's design
held to chapter 6's."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from helpers import RecallModel, train_recall
from helpers.device import effective_seed
from helpers.logit_rules import QKNormRecallModel, qk_norm, train_cosine_runs, train_logit_rule
from helpers.sink import SinkRecallModel, no_answer_batch, train_sink
from helpers.training import recall_batch
from tools import ch6_pilot, ch8_pilot
from tools.notebook_format import design_cell

ROOT = Path(__file__).resolve().parents[1]


def test_qk_norm_gives_each_vector_the_gain_as_its_root_mean_square():
    x = torch.randn(5, 3, 64) * torch.logspace(0, 3, 5)[:, None, None]  # very different sizes, all far above eps
    out = qk_norm(x, torch.full((64,), 2.0))
    assert out.shape == x.shape
    assert torch.allclose(out.pow(2).mean(dim=-1).sqrt(), torch.full((5, 3), 2.0), rtol=1e-4)
    assert torch.allclose(out / out.norm(dim=-1, keepdim=True), x / x.norm(dim=-1, keepdim=True), atol=1e-6)


def test_qk_norm_names_its_bad_arguments():
    x = torch.randn(4, 8)
    with pytest.raises(TypeError, match="x"):
        qk_norm(torch.ones(4, 8, dtype=torch.int64), torch.ones(8))
    with pytest.raises(ValueError, match="gain"):
        qk_norm(x, torch.ones(7))
    with pytest.raises(ValueError, match="gain"):
        qk_norm(x, torch.ones(2, 8))
    with pytest.raises(ValueError, match="eps"):
        qk_norm(x, torch.ones(8), eps=0.0)


def test_without_the_norm_the_model_is_recall_model():
    batch = recall_batch(8, generator=torch.Generator().manual_seed(3))
    torch.manual_seed(7)
    reference = RecallModel()
    torch.manual_seed(7)
    model = QKNormRecallModel(qk_norm=False)  # the same parameters: the gains draw nothing
    logits, weights = model(batch.pair_keys, batch.pair_values, batch.query)
    ref_logits, ref_weights = reference(batch.pair_keys, batch.pair_values, batch.query)
    assert torch.allclose(logits, ref_logits, atol=1e-5) and torch.allclose(weights, ref_weights, atol=1e-6)


def test_the_norm_bounds_the_logits_at_unit_gains():
    batch = recall_batch(16, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    model = QKNormRecallModel()
    with torch.no_grad():
        model.w_q.weight.mul_(1000.0)  # whatever the size of q and k ...
        model.w_k.weight.mul_(1000.0)
    z = model.attention_logits(batch.pair_keys, batch.pair_values, batch.query)
    assert z.abs().max() <= math.sqrt(64) * (1 + 1e-5)  # ... |q̂ · k̂| / √dₖ ≤ ‖q̂‖ ‖k̂‖ / √dₖ = √dₖ
    model.qk_norm = False
    assert model.attention_logits(batch.pair_keys, batch.pair_values, batch.query).abs().max() > 1000


def test_model_and_its_calls_name_bad_input():
    with pytest.raises(TypeError, match="qk_norm"):
        QKNormRecallModel(qk_norm=1)  # type: ignore[arg-type]
    model = QKNormRecallModel()
    keys = torch.zeros(2, 4, dtype=torch.int64)
    with pytest.raises(TypeError, match="query"):
        model(keys, keys, torch.zeros(2))
    with pytest.raises(ValueError, match="z"):
        model.answer(torch.zeros(2, 5), keys, keys)


def test_train_logit_rule_follows_train_recall_without_the_norm():
    """Same parameters, same batches, same Adam: the scaled rule is helpers.train_recall's run."""
    ours = train_logit_rule("sqrt", 0.01, seed=4, steps=25)
    theirs = train_recall(None, "adam", 0.01, seed=4, steps=25)
    assert max(abs(a - b) for a, b in zip(ours.loss, theirs.loss, strict=True)) < 1e-4
    assert len(ours.max_logit) == len(ours.gain_bound) == 25


def test_train_logit_rule_records_the_largest_logit_and_trains_the_gains():
    history = train_logit_rule("qk-norm", 0.01, seed=1, steps=5)
    assert all(0 < value <= math.sqrt(64) * 1.2 for value in history.max_logit)  # gains near 1 after 5 steps
    # Adam trains the gains: after 5 steps at this rate the bound has moved off sqrt(64) = 8 (fails if the gains
    # were left out of the optimizer or frozen; seen: 8.63 after 5 steps)
    assert history.gain_bound[0] == math.sqrt(64) and abs(history.gain_bound[-1] - math.sqrt(64)) > 0.05
    # eq-ch8-qk-bound, a check of the code: no logit of a step exceeds the bound of that step's gains
    assert all(z <= bound + 1e-4 for z, bound in zip(history.max_logit, history.gain_bound, strict=True))
    plain = train_logit_rule("sqrt", 0.01, seed=1, steps=5)  # the gains are unused without the norm
    assert plain.gain_bound == [math.sqrt(64)] * 5


def test_train_logit_rule_names_bad_arguments():
    with pytest.raises(ValueError, match="rule"):
        train_logit_rule("cap", 0.01)
    with pytest.raises(ValueError, match="lr"):
        train_logit_rule("sqrt", -0.01)
    with pytest.raises(ValueError, match="steps"):
        train_logit_rule("sqrt", 0.01, steps=0)


def test_chapter_8_takes_its_rates_ladder_and_steps_from_chapter_6():
    """Chapter 8's controls are the scaled model at chapter 6's Adam picks: fails if chapter 6's design changes."""
    six = ch6_pilot.design()
    eight = design_cell(ch8_pilot.NOTEBOOK, "# The design of the runaway", ch8_pilot.design())
    for d_k in eight["COSINE_WIDTHS"]:
        assert eight["CH6_ADAM_PICKS"][d_k] == six["PILOT"]["adam"]["sqrt"][six["D_KS_TRAIN"].index(d_k)]
    assert list(eight["CH6_ADAM_LADDER"]) == six["LADDER"]["adam"]
    assert eight["COSINE_LADDER"][: len(eight["CH6_ADAM_LADDER"])] == eight["CH6_ADAM_LADDER"]
    assert (eight["CH6_STEPS"], eight["RULE_STEPS"]) == (six["STEPS"], six["RULE_STEPS"])
    assert list(eight["PILOT_SEEDS"]) == list(six["PILOT_SEEDS"])
    assert list(eight["EVAL_SEEDS"]) == list(six["TRAIN_SEEDS"])
    assert eight["HIGH"] == 10 * eight["CH6_ADAM_PICKS"][64]


def cosine_reference(lr: float, seed: int, steps: int, d_k: int = 64) -> list[float]:
    """One run written plainly: RecallModel's parameters, t · cos(q, k) logits, torch.optim.Adam."""
    torch.manual_seed(effective_seed(seed))
    model = RecallModel(d_k=d_k)
    tau = torch.nn.Parameter(torch.tensor(math.log(10.0)))
    optimizer = torch.optim.Adam([*model.parameters(), tau], lr=lr)
    generator, losses = torch.Generator().manual_seed(effective_seed(seed)), []
    for _ in range(steps):
        batch = recall_batch(32, generator=generator)
        memory = (model.key_embedding(batch.pair_keys) + model.value_embedding(batch.pair_values)) / math.sqrt(2.0)
        q, k = model.w_q(model.key_embedding(batch.query)), model.w_k(memory)
        weights = (tau.clamp(max=math.log(100.0)).exp() * torch.cosine_similarity(k, q[:, None], dim=-1)).softmax(-1)
        logits = model.readout((weights[:, None] @ model.w_v(memory)).squeeze(1))
        loss = torch.nn.functional.cross_entropy(logits, batch.target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_train_cosine_runs_is_each_run_written_plainly():
    """The stacked runs (their order sorted by rate inside) against one plain loop each: fails if the batching, the
    gradients or the update were wrong (a non-contiguous gradient once made torch's fused Adam update wrongly)."""
    history = train_cosine_runs([0.01, 0.003], [2, 5], steps=30)
    for run, (lr, seed) in enumerate(((0.01, 2), (0.003, 5))):
        reference = cosine_reference(lr, seed, 30)
        assert max(abs(a - b) for a, b in zip(history.loss[run].tolist(), reference, strict=True)) < 1e-4
    assert history.temperature.shape == (2, 30) and history.temperature[:, 0].tolist() == pytest.approx([10.0] * 2)


def test_train_cosine_runs_keeps_the_temperature_under_its_cap_and_learns_it():
    history = train_cosine_runs([0.05], [0], steps=20, temperature_init=4.0, temperature_cap=4.0)
    assert (history.temperature <= 4.0 + 1e-5).all()  # the clamp: never above the cap
    free = train_cosine_runs([0.05], [0], steps=20, temperature_init=4.0)
    assert (free.temperature[0, -1] - 4.0).abs() > 0.1  # fails if τ were left out of the optimizer


def test_train_cosine_runs_names_bad_arguments():
    with pytest.raises(ValueError, match="lrs"):
        train_cosine_runs([-0.01], [0], steps=1)
    with pytest.raises(ValueError, match="run"):
        train_cosine_runs([0.01, 0.01], [0], steps=1)
    with pytest.raises(ValueError, match="temperature_cap"):
        train_cosine_runs([0.01], [0], steps=1, temperature_init=10.0, temperature_cap=5.0)
    with pytest.raises(ValueError, match="d_k"):
        train_cosine_runs([0.01], [0], d_k=0, steps=1)


# --- the sink logit -------------------------------------------------------------------------------


def test_no_answer_batch_asks_for_absent_keys_at_the_share_asked_for():
    batch = no_answer_batch(4000, 16, 32, 32, 0.5, generator=torch.Generator().manual_seed(0))
    held = (batch.pair_keys == batch.query[:, None]).any(dim=1)  # is the query among the row's keys?
    assert torch.equal(held, batch.answerable)  # no row's absent key is among its pairs
    rows = batch.answerable.nonzero().squeeze(1)
    position = (batch.pair_keys[rows] == batch.query[rows, None]).float().argmax(dim=1)
    assert torch.equal(batch.target[rows], batch.pair_values[rows, position])
    assert (batch.target[~batch.answerable] == -1).all()
    assert abs((~batch.answerable).float().mean().item() - 0.5) < 0.03  # 4000 rows: 4.7 standard errors
    assert all(row.unique().numel() == 16 for row in batch.pair_keys[:50])
    for share, answerable in ((0.0, True), (1.0, False)):
        drawn = no_answer_batch(64, no_answer_share=share, generator=torch.Generator().manual_seed(1))
        assert (drawn.answerable == answerable).all()


def test_no_answer_batch_names_bad_arguments():
    with pytest.raises(ValueError, match="n_pairs"):
        no_answer_batch(4, n_pairs=32, n_keys=32)  # no key is left to be absent
    with pytest.raises(ValueError, match="no_answer_share"):
        no_answer_batch(4, no_answer_share=1.5)
    with pytest.raises(TypeError, match="generator"):
        no_answer_batch(4, generator=0)


def test_without_the_sink_the_model_is_recall_model():
    torch.manual_seed(3)
    plain = RecallModel()
    torch.manual_seed(3)
    model = SinkRecallModel(sink=False)
    batch = recall_batch(8, generator=torch.Generator().manual_seed(0))
    for mine, theirs in zip(model(*batch[:3]), plain(*batch[:3]), strict=True):
        assert torch.allclose(mine, theirs, atol=1e-6)


def test_the_sink_is_one_more_column_of_the_softmax_dropped_after_it():
    """As gpt-oss's eager_attention_forward computes it: the sink's e^s joins the row's denominator."""
    torch.manual_seed(0)
    model = SinkRecallModel()
    batch = recall_batch(8, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.sink_logit.fill_(1.5)
        z = model.attention_logits(*batch[:3])
        _, weights = model.answer(z, batch.pair_keys, batch.pair_values)
    expected = z.exp() / (z.exp().sum(dim=-1, keepdim=True) + math.exp(1.5))
    assert torch.allclose(weights, expected, atol=1e-6)
    assert (weights.sum(dim=-1) < 1).all()
    with torch.no_grad():
        model.sink_logit.fill_(-200.0)  # a sink no row chooses: the plain softmax
        _, weights = model.answer(z, batch.pair_keys, batch.pair_values)
    assert torch.allclose(weights, z.softmax(dim=-1), atol=1e-6)


def test_train_sink_records_what_the_sink_takes_and_trains_it():
    with_sink, without = train_sink(True, 0.01, seed=0, steps=30), train_sink(False, 0.01, seed=0, steps=30)
    assert all(len(values) == 30 for values in vars(with_sink).values())
    assert with_sink.sink_logit[0] == 0.0 and with_sink.sink_logit[-1] != 0.0  # it starts at 0 and is trained
    assert set(without.sink_logit) == {0.0} and max(map(abs, without.sink_no_answer)) < 1e-5
    assert all(0 < value < 1 for value in with_sink.sink_no_answer + with_sink.sink_answerable)
    assert min(with_sink.no_answer_kl + without.no_answer_kl) >= -1e-5  # a KL divergence


def test_train_sink_names_bad_arguments():
    with pytest.raises(TypeError, match="sink"):
        train_sink(1, 0.01, steps=1)
    with pytest.raises(ValueError, match="lr"):
        train_sink(True, 0.0, steps=1)
    with pytest.raises(ValueError, match="no_answer_share"):
        train_sink(True, 0.01, steps=1, no_answer_share=-0.1)
    with pytest.raises(ValueError, match="steps"):
        train_sink(True, 0.01, steps=0)
