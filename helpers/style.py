"""One look for every figure in the book.

Colours are the Okabe–Ito palette, which stays distinguishable under the common
forms of colour blindness. Sizes are chosen to read on a phone: a figure is at
most ``MAX_FIGURE_WIDTH`` inches wide at ``DPI``, so that a 390-px-wide phone
shrinks it by no more than ~0.6 and its tick labels stay >= 9 CSS px tall.
Multi-panel figures stack their panels vertically (one column) for the same
reason. Figures are rendered as PNG: SVG output embeds dates and random ids,
which would make the executed notebooks change on every run.

Chapters: 1, 2, 3, 4, 5, 6, 7, 7b, 8.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
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
    "english_words",
    "figure_data_sha256",
    "figure_png_with_hash",
    "figure_texts",
    "glue_chinese",
    "plot_band",
    "slide_png",
    "slide_style",
    "smallest_text_pt",
    "translate_figure",
    "translate_text",
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
    """A hash of the numbers a figure draws, in order: every line's points, every collection's paths
    and offsets (a band's outline, a scatter's points), every patch an axes holds (bars, histograms,
    filled areas: their outlines in data coordinates) and every image's array.

    Two drawings with the same hash plot the same arrays, whatever their words (compare drawn figures:
    tick marks, which are lines too, are placed when a figure is drawn). Legend handles are
    lines and collections too, drawn at fixed places in the legend box, so they hash alike in both
    languages; the legend's frame and the axes' background patch are not data and are left out.
    """
    import hashlib

    import numpy as np
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D

    digest = hashlib.sha256()

    def update(array: Any) -> None:
        digest.update(np.ascontiguousarray(np.asarray(array, dtype=float)).tobytes())

    for artist in figure.findobj(lambda a: isinstance(a, Line2D | Collection)):
        if isinstance(artist, Line2D):
            update(artist.get_xydata())
            continue
        for path in artist.get_paths():
            update(path.vertices)
        offsets = np.asarray(artist.get_offsets(), dtype=float)
        if offsets.size and np.any(offsets):  # a scatter's points (a band's collection has none: one zero offset)
            update(offsets)
    for axes in figure.axes:
        for patch in axes.patches:  # bars, histograms, spans: what the drawing added, in data coordinates
            update(patch.get_patch_transform().transform(patch.get_path().vertices))
        for image in axes.images:
            update(image.get_array())
            update(image.get_extent())
    return digest.hexdigest()


def translate_text(words: str, table: dict[str, str]) -> str:
    """One figure text in Chinese: found whole in ``table``, or each entry found inside it replaced,
    longest first (``"no scale ($c = 1$), same lr (0.25)"``)."""
    new = table.get(words)
    if new is not None:
        return new
    for piece in sorted(table, key=len, reverse=True):
        new = (new if new is not None else words).replace(piece, table[piece])
    return words if new is None else new


def translate_figure(figure: Any, table: dict[str, str]) -> Any:
    """Put every text of ``figure`` (titles, axis labels, legend entries) into Chinese, in place
    (:func:`translate_text`). Changed texts get the CJK font (math keeps its own)."""
    from matplotlib.text import Text

    for text in figure.findobj(Text):
        words = text.get_text()
        new = translate_text(words, table)
        if new != words:
            text.set_text(new)
            text.set_fontfamily([CJK_FONT, "DejaVu Sans"])
    return figure


_MATH = re.compile(r"\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z]{2,}")


def english_words(text: str) -> list[str]:
    """The English words (two letters or more) of a figure text outside its math (``$d_k$``)."""
    return _WORD.findall(_MATH.sub(" ", text))


def figure_texts(figure: Any) -> list[str]:
    """The texts of ``figure`` that have words to translate (titles, axis labels, legend entries,
    annotations; not tick labels of numbers or math), each once, in drawing order. The figure is drawn
    first: tick labels exist only then. ``tools.locale`` extracts them into ``figures.po``."""
    from matplotlib.text import Text

    figure.canvas.draw()
    texts: list[str] = []
    for text in figure.findobj(Text):
        words = text.get_text()
        if text.get_visible() and english_words(words) and words not in texts:
            texts.append(words)
    return texts


FIGURE_CATALOG = Path(__file__).resolve().parents[1] / "locales" / "zh_CN" / "LC_MESSAGES" / "figures.po"
SOURCE_TEXTS_KEY = "Source-Texts"  # PNG metadata of a Chinese copy: its English texts (JSON), for tools.locale


def figure_words(catalog: Path = FIGURE_CATALOG) -> dict[str, str]:
    """msgid -> msgstr of every translated, non-fuzzy message of the figures' catalog."""
    from babel.messages.pofile import read_po

    with catalog.open("rb") as po:
        messages = [m for m in read_po(po) if m.id and m.string and not m.fuzzy and not m.pluralizable]
    return {str(m.id): str(m.string) for m in messages}


def glue_chinese(
    name: str,
    draw: Callable[..., Any],
    *,
    wide: bool | Callable[[], Any] = False,
    catalog: Path | None = None,
) -> None:
    """Glue the Chinese edition's copy of figure ``name`` (``fig_two_logits``).

    ``<name>_zh`` is drawn by ``draw()``; with ``wide=True`` also ``<name>_zh_wide``, by
    ``draw(wide=True)`` inside :func:`slide_style`, as the ``<name>_wide`` glue is (``wide`` may
    instead be the wide drawing function itself: ``wide=draw`` for a one-panel figure).

    Each layout is drawn twice by the same call: once left in English, once put into Chinese through
    ``figures.po`` (:func:`translate_figure`). Both are rendered as the English figure is glued
    (:func:`figure_png_with_hash`, :func:`slide_png`) and must carry the same data hash
    (:func:`figure_data_sha256`), else ``ValueError`` names the figure. Each Chinese PNG carries
    that hash (``Data-SHA256``) and the English texts it translated (``Source-Texts``, JSON), from
    which ``tools.locale`` writes the catalog's messages. A cell that calls it shows nothing;
    book/_ext/zh_edition.py shows the copies on the Chinese pages. Outside the book's repository (a
    learner's copy has no catalog) it glues nothing.

        helpers.style.glue_chinese("fig_whole_chain", whole_chain, wide=True)
    """
    import json

    from helpers.book import glue

    if not isinstance(name, str) or not re.fullmatch(r"fig_\w+", name):
        raise ValueError(f"name must be a figure glue name like 'fig_two_logits', got {name!r}")
    if not callable(draw):
        raise TypeError(f"draw must be a drawing function, got {type(draw).__name__}")
    if not isinstance(wide, bool) and not callable(wide):
        raise TypeError(f"wide must be a bool or a drawing function, got {type(wide).__name__}")
    path = FIGURE_CATALOG if catalog is None else Path(catalog)
    if not path.is_file():
        return
    words = figure_words(path)
    layouts: list[tuple[str, Callable[[], Any], bool]] = [("_zh", draw, False)]
    if wide is True:
        layouts.append(("_zh_wide", lambda: draw(wide=True), True))
    elif wide is not False:
        layouts.append(("_zh_wide", wide, True))
    for suffix, drawing, for_slide in layouts:
        with slide_style() if for_slide else nullcontext():
            english, chinese = drawing(), drawing()
            extra = {SOURCE_TEXTS_KEY: json.dumps(figure_texts(english), ensure_ascii=False)}
            render = slide_png if for_slide else figure_png_with_hash  # as the English figure is glued
            english_hash = _stamp(render(english))
            png = render(translate_figure(chinese, words), extra)
        if _stamp(png) != english_hash:
            raise ValueError(f"{name}{suffix}: the Chinese copy draws other data than the English figure")
        glue(f"{name}{suffix}", png)


def _stamp(png: Any) -> str:
    """The ``Data-SHA256`` a PNG (an ``IPython.display.Image``) carries."""
    import io

    from PIL import Image

    return str(Image.open(io.BytesIO(png.data)).info["Data-SHA256"])


def figure_png_with_hash(figure: Any, metadata: dict[str, str] | None = None) -> Any:
    """A figure as a PNG (as ``helpers.figure_png`` draws it) whose metadata carries the hash of its
    data (``Data-SHA256``, :func:`figure_data_sha256`) and ``metadata``'s entries; the figure is closed."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image

    figure.canvas.draw()  # places the tick marks, which the hash includes, as slide_png does
    buffer = io.BytesIO()
    stamp = {"Data-SHA256": figure_data_sha256(figure), **(metadata or {})}
    figure.savefig(buffer, format="png", bbox_inches="tight", metadata=stamp)
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


def slide_png(figure: Any, metadata: dict[str, str] | None = None) -> Any:
    """A figure drawn for a slide, as a tight PNG at the book's DPI; the figure is closed.

    Text a drawing sizes by hand below SLIDE_FONT_PT (a web layout's 9-pt legend) is raised to it
    before the layout is computed, so nothing on a slide is smaller. The PNG's metadata carries
    the smallest text size it draws (``Min-Font-Pt``, which tests/test_slides.py turns into CSS px on
    each slide), the hash of its data (``Data-SHA256``, as :func:`figure_png_with_hash`) and
    ``metadata``'s entries.
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
    stamp = {
        "Min-Font-Pt": f"{smallest_text_pt(figure):g}",
        "Data-SHA256": figure_data_sha256(figure),
        **(metadata or {}),
    }
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", metadata=stamp)
    plt.close(figure)
    return Image(data=buffer.getvalue())  # type: ignore[no-untyped-call]  # IPython is unannotated
