"""Shared code for the notebooks of "Why attention divides by √d_k".

The flat namespace ``helpers.X`` is what the chapters use; everything else stays in its
submodule (``helpers.training.recall_batch``, ...). The book's helpers page
(``book/helpers.md``, built from the source by ``tools/helpers_index.py``) lists every
module in reading order, each function with its signature and docstring, and the chapters
whose code calls it: that list is derived from the notebooks, so it cannot go stale.
``train`` and ``RecallModel`` are the code chapter 6 tells its readers to read.

The verdicts of ``diagnose_attention`` (``CORRECT``, ``NO_SCALE``, ``DOUBLE_SCALE``,
``SCALE_AFTER_SOFTMAX``, ``VALUE_WIDTH_SCALE``, ``KEY_COUNT_SCALE``, ``UNEXPECTED``) are flat too;
chapter 7 reads them as ``helpers.diagnostics.CORRECT``, which keeps working.
"""

from helpers.attention import (
    attention_logits,
    buggy_attention_no_scale,
    buggy_attention_scale_after_softmax,
    scaled_dot_product_attention,
)
from helpers.book import figure_png, glue, table
from helpers.curves import moving_average, steps_to_accuracy
from helpers.device import effective_seed, get_device, seed_everything
from helpers.diagnostics import (
    CORRECT,
    DOUBLE_SCALE,
    KEY_COUNT_SCALE,
    NO_SCALE,
    SCALE_AFTER_SOFTMAX,
    UNEXPECTED,
    VALUE_WIDTH_SCALE,
    diagnose_attention,
)
from helpers.logit_rules import (
    LogitHistory,
    QKNormRecallModel,
    SinkHistory,
    SinkRecallModel,
    qk_norm,
    train_cosine_runs,
    train_logit_rule,
    train_sink,
)
from helpers.online import online_attention, online_softmax
from helpers.recall_runs import train_recall_runs
from helpers.scales import attention_statistics_at_init
from helpers.softmax import naive_softmax, softmax_backward, softmax_entropy
from helpers.style import COLORS, SCALE_COLORS, SCALE_LABELS, plot_band, use_book_style
from helpers.training import (
    RecallModel,
    TrainHistory,
    train,
    train_recall,
)

__all__ = [
    "COLORS",
    "CORRECT",
    "DOUBLE_SCALE",
    "KEY_COUNT_SCALE",
    "NO_SCALE",
    "SCALE_AFTER_SOFTMAX",
    "SCALE_COLORS",
    "SCALE_LABELS",
    "UNEXPECTED",
    "VALUE_WIDTH_SCALE",
    "LogitHistory",
    "QKNormRecallModel",
    "RecallModel",
    "SinkHistory",
    "SinkRecallModel",
    "TrainHistory",
    "attention_logits",
    "attention_statistics_at_init",
    "buggy_attention_no_scale",
    "buggy_attention_scale_after_softmax",
    "diagnose_attention",
    "figure_png",
    "get_device",
    "glue",
    "moving_average",
    "naive_softmax",
    "online_attention",
    "online_softmax",
    "plot_band",
    "qk_norm",
    "scaled_dot_product_attention",
    "seed_everything",
    "effective_seed",
    "softmax_backward",
    "softmax_entropy",
    "steps_to_accuracy",
    "table",
    "train",
    "train_cosine_runs",
    "train_logit_rule",
    "train_recall",
    "train_recall_runs",
    "train_sink",
    "use_book_style",
]
