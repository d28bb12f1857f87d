"""Shared code for the notebooks of "Why attention divides by √d_k"."""

from helpers.attention import (
    attention_logits,
    buggy_attention_no_scale,
    buggy_attention_scale_after_softmax,
    naive_softmax,
    scaled_dot_product_attention,
    softmax_backward,
    softmax_entropy,
)
from helpers.book import Table, glue, table
from helpers.device import get_device, seed_everything
from helpers.diagnostics import AttentionDiagnosis, diagnose_attention, implied_logit_scale
from helpers.online import online_attention, online_softmax
from helpers.scales import STATISTICS, attention_statistics_at_init
from helpers.style import COLORS, SCALE_COLORS, SCALE_LABELS, plot_band, use_book_style
from helpers.training import (
    RecallBatch,
    RecallModel,
    RunsHistory,
    TrainHistory,
    init_recall_runs,
    moving_average,
    recall_batch,
    steps_to_accuracy,
    train,
    train_recall,
    train_recall_runs,
)

__all__ = [
    "COLORS",
    "SCALE_COLORS",
    "SCALE_LABELS",
    "Table",
    "AttentionDiagnosis",
    "RecallBatch",
    "RecallModel",
    "RunsHistory",
    "TrainHistory",
    "attention_logits",
    "buggy_attention_no_scale",
    "buggy_attention_scale_after_softmax",
    "diagnose_attention",
    "get_device",
    "glue",
    "implied_logit_scale",
    "init_recall_runs",
    "moving_average",
    "naive_softmax",
    "online_attention",
    "online_softmax",
    "recall_batch",
    "scaled_dot_product_attention",
    "seed_everything",
    "softmax_backward",
    "softmax_entropy",
    "steps_to_accuracy",
    "train",
    "train_recall",
    "train_recall_runs",
    "plot_band",
    "table",
    "use_book_style",
    "STATISTICS",
    "attention_statistics_at_init",
]
