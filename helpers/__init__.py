"""Shared code for the notebooks of "Why attention divides by √d_k".

The flat namespace ``helpers.X`` is what the chapters use; everything else
stays in its submodule (``helpers.training.recall_batch``, ...). Which chapter
uses which helper, in code cells on any of the branches being written
(integration, ch13, ch45, ch6); ``train`` and ``RecallModel`` are named in
chapter 6's prose as the code to read:

=====================================  ===========  ==========================
helper                                 module       chapters
=====================================  ===========  ==========================
attention_logits                       attention    1, 2, 3, 4, 5, 6, 7b
scaled_dot_product_attention           attention    1, 5, 7, 7b
buggy_attention_no_scale               attention    1, 7
buggy_attention_scale_after_softmax    attention    1, 7
naive_softmax                          softmax      3, 4
softmax_entropy                        softmax      1, 3, 4, 5, 6, 7, 7b
softmax_backward                       softmax      3, 6
online_softmax                         online       3, 4
online_attention                       online       7b
attention_statistics_at_init           scales       4, 5
RecallModel                            training     6 (prose)
TrainHistory                           training     6
train                                  training     6 (prose)
train_recall                           training     6, 7
train_recall_runs                      training     5, 6
steps_to_accuracy                      training     5, 6
moving_average                         training     5, 6, 7
diagnose_attention                     diagnostics  7
the five verdicts (below)              diagnostics  7 (as helpers.diagnostics.X)
get_device, seed_everything            device       1, 2, 3, 4, 5, 6, 7, 7b
effective_seed                         device       (tests; make portability's seed-shift point)
use_book_style, COLORS                 style        1, 2, 3, 4, 5, 6, 7, 7b
SCALE_COLORS                           style        1, 3, 4, 5, 7, 7b
SCALE_LABELS                           style        1, 3, 4, 5, 7
plot_band                              style        1, 2, 3, 4, 5, 7, 7b
glue                                   book         1, 2, 3, 4, 5, 6, 7, 7b
figure_png                             book         6
table                                  book         1, 2, 3, 4, 5, 7, 7b
=====================================  ===========  ==========================

The verdicts of ``diagnose_attention`` (``CORRECT``, ``NO_SCALE``,
``SCALE_AFTER_SOFTMAX``, ``VALUE_WIDTH_SCALE``, ``UNEXPECTED``) are flat too;
chapter 7 reads them as ``helpers.diagnostics.CORRECT``, which keeps working.
"""

from helpers.attention import (
    attention_logits,
    buggy_attention_no_scale,
    buggy_attention_scale_after_softmax,
    scaled_dot_product_attention,
)
from helpers.book import figure_png, glue, table
from helpers.device import effective_seed, get_device, seed_everything
from helpers.diagnostics import (
    CORRECT,
    NO_SCALE,
    SCALE_AFTER_SOFTMAX,
    UNEXPECTED,
    VALUE_WIDTH_SCALE,
    diagnose_attention,
)
from helpers.online import online_attention, online_softmax
from helpers.scales import attention_statistics_at_init
from helpers.softmax import naive_softmax, softmax_backward, softmax_entropy
from helpers.style import COLORS, SCALE_COLORS, SCALE_LABELS, plot_band, use_book_style
from helpers.training import (
    RecallModel,
    TrainHistory,
    moving_average,
    steps_to_accuracy,
    train,
    train_recall,
    train_recall_runs,
)

__all__ = [
    "COLORS",
    "CORRECT",
    "NO_SCALE",
    "SCALE_AFTER_SOFTMAX",
    "SCALE_COLORS",
    "SCALE_LABELS",
    "UNEXPECTED",
    "VALUE_WIDTH_SCALE",
    "RecallModel",
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
    "scaled_dot_product_attention",
    "seed_everything",
    "effective_seed",
    "softmax_backward",
    "softmax_entropy",
    "steps_to_accuracy",
    "table",
    "train",
    "train_recall",
    "train_recall_runs",
    "use_book_style",
]
