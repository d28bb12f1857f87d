"""One look for every figure in the book.

Colours are the Okabe–Ito palette, which stays distinguishable under the common
forms of colour blindness; sizes are chosen to read on the site and on slides.
Figures are rendered as PNG: SVG output embeds dates and random ids, which
would make the executed notebooks change on every run.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COLORS", "use_book_style"]

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

_RC: dict[str, Any] = {
    "figure.figsize": (7.0, 4.2),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "figure.facecolor": "white",  # stays readable on the theme's dark mode
    "font.size": 12,
    "axes.titlesize": 13,
    "axes.labelsize": 12,
    "legend.fontsize": 11,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.0,
    "lines.markersize": 6,
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
