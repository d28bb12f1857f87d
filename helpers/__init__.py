"""The code the chapters of "Why attention divides by √d_k" share.

``helpers.X`` is what the chapters call; the rest stays in its module (``helpers.diagnostics.CORRECT``). The book's
helpers page (``book/helpers.md``) lists every module, function and signature, and the chapters that call them.
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
from helpers.diagnostics import diagnose_attention
from helpers.logit_rules import train_cosine_runs, train_logit_rule
from helpers.online import online_attention, online_softmax
from helpers.recall_runs import train_recall_runs
from helpers.scales import attention_statistics_at_init
from helpers.sink import train_sink
from helpers.softmax import naive_softmax, softmax_backward, softmax_entropy
from helpers.style import COLORS, SCALE_COLORS, SCALE_LABELS, plot_band, use_book_style
from helpers.training import RecallModel, train_recall

__all__ = [
    "COLORS", "SCALE_COLORS", "SCALE_LABELS", "RecallModel", "attention_logits", "attention_statistics_at_init",
    "buggy_attention_no_scale", "buggy_attention_scale_after_softmax", "diagnose_attention", "effective_seed",
    "figure_png", "get_device", "glue", "moving_average", "naive_softmax", "online_attention", "online_softmax",
    "plot_band", "scaled_dot_product_attention", "seed_everything", "softmax_backward", "softmax_entropy",
    "steps_to_accuracy", "table", "train_cosine_runs", "train_logit_rule", "train_recall", "train_recall_runs",
    "train_sink", "use_book_style",
]  # fmt: skip
