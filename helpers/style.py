"""One look for every figure in the book.

Colours are the Okabe–Ito palette, distinguishable under the common colour blindnesses. A figure is at most
``MAX_FIGURE_WIDTH`` inches wide at ``DPI``; the site shows it at its natural size, where its smallest text (8 pt or
more) is at least 12 CSS px, scrolling sideways on a phone narrower than the figure; panels stack. Figures are PNG
(SVG embeds dates and random ids). The build draws a second, ``wide`` copy at ``SLIDE_FIGSIZE`` for the desktop
layout and the slides (``tools/figures.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # helpers imports matplotlib only where it draws
    from matplotlib.typing import RcKeyType

__all__ = [
    "COLORS", "DPI", "MAX_FIGURE_WIDTH", "SCALE_COLORS", "SCALE_LABELS", "SLIDE_FIGSIZE", "TICK_FONT_PT",
    "plot_band", "use_book_style",
]  # fmt: skip

# Okabe & Ito (2008), "Color Universal Design".
COLORS: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}

# One name, one label and one colour per multiplier c of the logits, in every chapter.
SCALE_LABELS: dict[str, str] = {
    "none": r"no scale ($c = 1$)",
    "sqrt": r"$c = 1/\sqrt{d_k}$",
    "half": r"$c = 1/(2\sqrt{d_k})$",
    "lin": r"$c = 1/d_k$",
}
SCALE_COLORS: dict[str, str] = {
    "none": COLORS["vermillion"],
    "sqrt": COLORS["blue"],
    "half": COLORS["purple"],
    "lin": COLORS["green"],
}

DPI = 110
MAX_FIGURE_WIDTH = 5.4  # inches; tests/test_site.py checks the rendered size on a phone
TICK_FONT_PT = 11
SLIDE_FIGSIZE = (11.0, 4.4)  # inches, a wide layout's panels side by side: 1210 x 484 px, a 1280 x 720 slide's room

_RC: dict[RcKeyType, Any] = {
    "figure.figsize": (5.2, 3.4),
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.facecolor": "white",  # stays readable on the theme's dark mode
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 10,
    "xtick.labelsize": TICK_FONT_PT,
    "ytick.labelsize": TICK_FONT_PT,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.0,
    "lines.markersize": 5,
    "figure.constrained_layout.use": True,
    "svg.hashsalt": "book",  # fixed ids, should anyone save SVG
}


def use_book_style() -> None:
    """Apply the book's matplotlib style (call once, at the top of a notebook)."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(_RC)
    order = ["blue", "orange", "green", "vermillion", "purple", "sky", "black"]
    mpl.rcParams["axes.prop_cycle"] = cycler(color=[COLORS[name] for name in order])


def plot_band(
    ax: Any,
    x: Sequence[float] | Any,
    curves: Any,
    label: str | None = None,
    color: str | None = None,
    **line_kwargs: Any,
) -> None:
    """Draw on ``ax`` the mean over seeds of ``curves`` (n_seeds, n_points) at ``x`` (n_points,) as a line, and
    their min–max range as a band: every seed lies inside it, so a claim "on every seed" can be read off the figure.
    ``label`` and ``color`` (default: the cycle's next) are the line's; ``line_kwargs`` go to ``ax.plot``."""
    import numpy as np

    values = np.asarray(curves.detach().cpu() if hasattr(curves, "detach") else curves, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"curves must have shape (n_seeds, n_points), got {values.shape}")
    positions = np.asarray(x.detach().cpu() if hasattr(x, "detach") else x, dtype=float)
    if positions.shape != values.shape[1:]:
        raise ValueError(f"x must have shape ({values.shape[1]},) to match curves, got {positions.shape}")
    (line,) = ax.plot(positions, values.mean(axis=0), label=label, color=color, **line_kwargs)
    ax.fill_between(positions, values.min(axis=0), values.max(axis=0), color=line.get_color(), alpha=0.25, linewidth=0)
