"""One look for every figure in the book.

Colours are the Okabe–Ito palette, which stays distinguishable under the common
forms of colour blindness. Sizes are chosen to read on a phone: a figure is at
most ``MAX_FIGURE_WIDTH`` inches wide at ``DPI``, so that a 390-px-wide phone
shrinks it by no more than ~0.6 and its tick labels stay >= 9 CSS px tall.
Multi-panel figures stack their panels vertically (one column) for the same
reason. Figures are rendered as PNG: SVG output embeds dates and random ids,
which would make the executed notebooks change on every run.

Chapters: 1, 2, 3, 4, 5, 6, 7, 7b.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # helpers imports matplotlib only where it draws
    from matplotlib.typing import RcKeyType

__all__ = [
    "COLORS",
    "DPI",
    "MAX_FIGURE_WIDTH",
    "SCALE_COLORS",
    "SCALE_LABELS",
    "SLIDE_FIGSIZE",
    "SLIDE_FONT_PT",
    "SLIDE_PANEL_FIGSIZE",
    "TICK_FONT_PT",
    "plot_band",
    "slide_png",
    "slide_style",
    "smallest_text_pt",
    "use_book_style",
]

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
    """Draw the mean over seeds as a line and the min–max range over seeds as a band.

    The book's one way to show a result with its spread: every seed lies inside
    the band, so a claim that holds "on every seed" can be read off the figure.

    Args:
        ax: a matplotlib Axes.
        x: (n_points,) positions on the x axis.
        curves: (n_seeds, n_points) values, one row per seed (tensor or array).
        label: legend entry of the line.
        color: line and band colour (default: the next colour of the cycle).
        **line_kwargs: passed to ``ax.plot`` (``marker``, ``linestyle``, ...).
    """
    import numpy as np

    values = np.asarray(curves.detach().cpu() if hasattr(curves, "detach") else curves, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"curves must have shape (n_seeds, n_points), got {values.shape}")
    positions = np.asarray(x.detach().cpu() if hasattr(x, "detach") else x, dtype=float)
    if positions.shape != values.shape[1:]:
        raise ValueError(f"x must have shape ({values.shape[1]},) to match curves, got {positions.shape}")
    (line,) = ax.plot(positions, values.mean(axis=0), label=label, color=color, **line_kwargs)
    ax.fill_between(positions, values.min(axis=0), values.max(axis=0), color=line.get_color(), alpha=0.25, linewidth=0)


# The Chinese edition's figures: the same drawing, its words swapped (tools/locale.py, book/_ext/zh_edition.py).
CJK_FONT = "Noto Sans CJK SC"  # Debian's fonts-noto-cjk, installed wherever the Chinese edition builds (GUIDE)


def figure_data_sha256(figure: Any) -> str:
    """A hash of the numbers a figure draws: every line's points and every band's outline, in order.

    Two drawings with the same hash plot the same arrays, whatever their words.
    """
    import hashlib

    import numpy as np
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D

    digest = hashlib.sha256()
    for artist in figure.findobj(lambda a: isinstance(a, Line2D | Collection)):
        if isinstance(artist, Line2D):
            parts = [np.asarray(artist.get_xydata(), dtype=float)]
        else:
            parts = [np.asarray(path.vertices, dtype=float) for path in artist.get_paths()]
        for part in parts:
            digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()


def translate_figure(figure: Any, table: dict[str, str]) -> Any:
    """Put every text of ``figure`` (titles, axis labels, legend entries) into Chinese, in place.

    A text found whole in ``table`` is replaced; otherwise each entry found inside it is, longest
    first (``"no scale ($c = 1$), same lr (0.25)"``). Changed texts get the CJK font (math keeps its own).
    """
    from matplotlib.text import Text

    pieces = sorted(table, key=len, reverse=True)
    for text in figure.findobj(Text):
        words = text.get_text()
        new = table.get(words)
        if new is None:
            new = words
            for piece in pieces:
                new = new.replace(piece, table[piece])
        if new != words:
            text.set_text(new)
            text.set_fontfamily([CJK_FONT, "DejaVu Sans"])
    return figure


def figure_png_with_hash(figure: Any) -> Any:
    """A figure as a PNG (as ``helpers.figure_png`` draws it) whose metadata carries the hash of its
    data (``Data-SHA256``, :func:`figure_data_sha256`); the figure is closed."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", metadata={"Data-SHA256": figure_data_sha256(figure)})
    plt.close(figure)
    return Image(data=buffer.getvalue())  # type: ignore[no-untyped-call]  # IPython is unannotated


# --- Figures for slides ---------------------------------------------------------------------------
# Every figure a deck shows is also drawn for a 1280 x 720 slide (CONVENTIONS item 3: the
# `<figure name>_wide` glue, from the same arrays, by the same drawing function), and the desktop
# site shows that version too (book/_ext/wide_figures.py). Text of s points, drawn at DPI, is
# s * DPI / 72 pixels tall in the PNG, and a slide shows the PNG at (rendered / natural width) CSS
# pixels per PNG pixel. The sizes below make the PNG's natural size fit a slide under its title and
# three lines of text (1280 px less the slide's 2 x 24 px padding is 1232 px; 720 px less the
# title, text and padding leaves about 490 px), so the deck shows it at its natural size or larger
# (book/_ext/slides/deck.js grows a figure where there is room). SLIDE_MIN_SCALE is the smallest scale
# a slide may show it at, as a 1280 x 720 window shows the deck (reveal.js fits the slide in with a 2 %
# margin: SLIDE_VIEW_SCALE), so deck.js may shrink a figure to SLIDE_MIN_SCALE / SLIDE_VIEW_SCALE of
# its size where a slide holds more text. The smallest text follows: at least SLIDE_TEXT_PX at that
# smallest scale (tests/test_slides.py measures every slide against it).
SLIDE_TEXT_PX = 18.0  # the minimum, CSS px at 1280 x 720
SLIDE_MIN_SCALE = 0.92
SLIDE_VIEW_SCALE = 1 / 1.02  # reveal.js's margin 0.02 (book/_ext/slides/deck.js)
SLIDE_FIGSIZE = (11.0, 4.4)  # inches, panels side by side: 1210 x 484 px at DPI
SLIDE_PANEL_FIGSIZE = (7.4, 4.4)  # inches, one panel: 814 x 484 px
SLIDE_FONT_PT = math.ceil(2 * SLIDE_TEXT_PX * 72 / (DPI * SLIDE_MIN_SCALE)) / 2  # 13.0 pt: 19.9 px at 1x

_SLIDE_RC: dict[RcKeyType, Any] = {
    "figure.figsize": SLIDE_PANEL_FIGSIZE,
    "font.size": SLIDE_FONT_PT,
    "axes.titlesize": SLIDE_FONT_PT + 1,
    "axes.labelsize": SLIDE_FONT_PT,
    "legend.fontsize": SLIDE_FONT_PT,
    "legend.title_fontsize": SLIDE_FONT_PT,
    "figure.titlesize": SLIDE_FONT_PT + 2,
    "xtick.labelsize": SLIDE_FONT_PT,
    "ytick.labelsize": SLIDE_FONT_PT,
    "lines.linewidth": 2.5,
    "lines.markersize": 6,
}


@contextmanager
def slide_style() -> Iterator[None]:
    """Draw for a slide inside this block: the book's style with text at SLIDE_FONT_PT or more and
    SLIDE_PANEL_FIGSIZE as the default size (a drawing's side-by-side layout asks for SLIDE_FIGSIZE).
    Every setting is restored on leaving, so the web figures drawn after it are unchanged.

        with helpers.style.slide_style():
            glue("fig_lr_grid_wide", helpers.style.slide_png(rate_figure(wide=True)))
    """
    import matplotlib as mpl

    with mpl.rc_context(_SLIDE_RC):
        yield


def smallest_text_pt(figure: Any) -> float:
    """The size, in points, of the smallest text ``figure`` draws (titles, labels, tick labels, legend
    entries, annotations: every visible, non-empty text). Draws the figure first: tick labels exist
    only once it has been drawn."""
    from matplotlib.text import Text

    figure.canvas.draw()
    sizes = [
        float(text.get_fontsize())
        for text in figure.findobj(Text)
        if text.get_visible() and text.get_text().strip() and _drawn(text)
    ]
    if not sizes:
        raise ValueError("figure draws no text")
    return min(sizes)


def _drawn(text: Any) -> bool:
    """Whether a text is drawn: not a tick label of an axes switched off (``ax.set_axis_off()``)."""
    axes = getattr(text, "axes", None)
    return (
        axes is None
        or bool(axes.axison)
        or text not in axes.xaxis.get_ticklabels(which="both") + axes.yaxis.get_ticklabels(which="both")
    )


def slide_png(figure: Any) -> Any:
    """A figure drawn for a slide, as a tight PNG at the book's DPI; the figure is closed.

    Text a drawing sizes by hand below SLIDE_FONT_PT (a web layout's 9-pt legend) is raised to it
    before the layout is computed, so nothing on a slide is smaller. The PNG's metadata carries
    the smallest text size it draws (``Min-Font-Pt``, which tests/test_slides.py turns into CSS px on
    each slide) and the hash of its data (``Data-SHA256``, as :func:`figure_png_with_hash`).
    """
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image
    from matplotlib.text import Text

    figure.canvas.draw()  # creates the tick labels
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            labels = axis.get_ticklabels(which="both")
            if labels and min(label.get_fontsize() for label in labels) < SLIDE_FONT_PT:
                axis.set_tick_params(which="both", labelsize=SLIDE_FONT_PT)
    for text in figure.findobj(Text):
        if text.get_fontsize() < SLIDE_FONT_PT:
            text.set_fontsize(SLIDE_FONT_PT)
    metadata = {"Min-Font-Pt": f"{smallest_text_pt(figure):g}", "Data-SHA256": figure_data_sha256(figure)}
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", metadata=metadata)
    plt.close(figure)
    return Image(data=buffer.getvalue())  # type: ignore[no-untyped-call]  # IPython is unannotated
