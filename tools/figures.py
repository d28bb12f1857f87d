"""Book production for figures: the layouts and copies that the build shows beside the chapter's own.

A chapter draws each figure once, for a phone, and shows it. The site and the decks show two more
layouts of the same drawing, which only a build-only cell (tagged ``remove-cell``) glues:

- ``<name>_wide``: side by side, for the desktop site and a 1280 x 720 slide (:func:`slide_png`,
  drawn inside :func:`slide_style`; book/_ext/wide_figures.py and the decks pick it up);
- ``<name>_zh`` and ``<name>_zh_wide``: the Chinese edition's copies, the same drawing with its words
  put into Chinese through ``locales/zh_CN/LC_MESSAGES/figures.po`` (:func:`glue_chinese`).

One call does both for a figure (:func:`glue_copies`)::

    from tools import figures

    figures.glue_copies("fig_lr_grid", rate_figure, wide=True)

Every PNG made here carries in its metadata the hash of the numbers it draws (``Data-SHA256``,
:func:`figure_data_sha256`); a Chinese copy must carry its English figure's hash, and a slide layout
also records its smallest text (``Min-Font-Pt``, which tests/test_slides.py turns into CSS pixels).
This module is not part of the learners' package (``helpers``): the learner edition has no
build-only cells, and the book's environment finds ``tools`` through the ``.pth`` file that
``make setup`` writes.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any


def book_style() -> Any:
    """helpers/style.py, read without importing helpers (and torch with it): a tool costs no torch to import."""
    spec = importlib.util.spec_from_file_location(
        "book_style", Path(__file__).resolve().parents[1] / "helpers" / "style.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DPI: int = book_style().DPI  # the book's figures' resolution (helpers.style.DPI)


def glue(name: str, value: Any) -> None:
    """``helpers.glue``, imported where a build-only cell glues (in a kernel that has torch already)."""
    from helpers.book import glue as helpers_glue

    helpers_glue(name, value)


__all__ = [
    "FIGURE_TEXT_PX",
    "SLIDE_FONT_PT",
    "WEB_MIN_FONT_PT",
    "english_words",
    "figure_data_sha256",
    "figure_png_with_hash",
    "figure_texts",
    "figure_words",
    "glue_chinese",
    "glue_copies",
    "slide_png",
    "slide_style",
    "smallest_text_pt",
    "translate_figure",
    "translate_text",
]

# --- The site -----------------------------------------------------------------------------------
# The site shows figure text at FIGURE_TEXT_PX or more, at every width from a 390-px phone to a
# 1920-px desktop (tests/test_site.py, tests/test_site_layout.py). A chapter's own (phone) drawing records
# no Min-Font-Pt; its smallest text is at least WEB_MIN_FONT_PT, the smallest size a chapter sets by hand
# (a legend's fontsize=8; the book's style sets 10 pt and more; tests/test_tools.py holds the notebooks to
# it). At the book's DPI that is 12.2 px at the natural size, at which the site shows such a figure
# (book/_assets/book.css, .figure-scroll). A wide layout records its own (Min-Font-Pt, 13 pt).
FIGURE_TEXT_PX = 12.0
WEB_MIN_FONT_PT = 8.0

# --- Slides -------------------------------------------------------------------------------------
# Text of s points, drawn at DPI, is s * DPI / 72 pixels tall in the PNG, and a slide shows the PNG at
# (rendered / natural width) CSS pixels per PNG pixel. The sizes make the PNG's natural size fit a
# 1280 x 720 slide under its title and three lines of text (1280 px less the slide's 2 x 24 px padding
# is 1232 px; 720 px less the title, text and padding leaves about 490 px), so the deck shows it at its
# natural size or larger (book/_ext/slides/deck.js grows a figure where there is room). SLIDE_MIN_SCALE
# is the smallest scale a slide may show it at, as a 1280 x 720 window shows the deck (reveal.js fits
# the slide in with a 2 % margin: SLIDE_VIEW_SCALE). The smallest text follows: at least SLIDE_TEXT_PX
# at that scale (tests/test_slides.py measures every slide against it).
SLIDE_TEXT_PX = 18.0  # the smallest text a slide shows, CSS px at 1280 x 720 (CONTRIBUTING.md, "Slides")
SLIDE_MIN_SCALE = 0.92
SLIDE_VIEW_SCALE = 1 / 1.02  # reveal.js's margin 0.02 (book/_ext/slides/deck.js)
SLIDE_PANEL_FIGSIZE = (7.4, 4.4)  # inches, one panel: 814 x 484 px (two panels: helpers.style.SLIDE_FIGSIZE)
SLIDE_FONT_PT = math.ceil(2 * SLIDE_TEXT_PX * 72 / (DPI * SLIDE_MIN_SCALE)) / 2  # 13.0 pt: 19.9 px at 1x

_SLIDE_RC: dict[str, Any] = {
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
    SLIDE_PANEL_FIGSIZE as the default size (a side-by-side layout asks for helpers.style.SLIDE_FIGSIZE).
    Every setting is restored on leaving, so the web figures drawn after it are unchanged."""
    import matplotlib as mpl

    with mpl.rc_context(_SLIDE_RC):
        yield


def smallest_text_pt(figure: Any) -> float:
    """The size, in points, of the smallest visible, non-empty text ``figure`` draws (titles, labels, tick
    labels, legend entries, annotations). Draws the figure first: tick labels exist only then."""
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
    """A figure drawn for a slide, as a tight PNG (an ``IPython.display.Image``) at the book's DPI; the
    figure is closed.

    Text a drawing sizes by hand below SLIDE_FONT_PT (a web layout's 9-pt legend) is raised to it before
    the layout is computed, so nothing on a slide is smaller. The PNG's metadata carries ``Min-Font-Pt``
    (the smallest text), ``Data-SHA256`` (:func:`figure_data_sha256`) and ``metadata``'s entries.
    """
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
    stamp = {"Min-Font-Pt": f"{smallest_text_pt(figure):g}", "Data-SHA256": figure_data_sha256(figure)}
    return _png(figure, {**stamp, **(metadata or {})}, dpi=DPI)


def figure_png_with_hash(figure: Any, metadata: dict[str, str] | None = None) -> Any:
    """A figure as a PNG (as ``helpers.figure_png`` draws it) whose metadata carries ``Data-SHA256``
    (:func:`figure_data_sha256`) and ``metadata``'s entries; the figure is closed."""
    figure.canvas.draw()  # places the tick marks, which the hash includes, as slide_png does
    return _png(figure, {"Data-SHA256": figure_data_sha256(figure), **(metadata or {})})


def _png(figure: Any, metadata: dict[str, str], **savefig: Any) -> Any:
    import matplotlib.pyplot as plt
    from IPython.display import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", metadata=metadata, **savefig)
    plt.close(figure)
    return Image(data=buffer.getvalue())  # type: ignore[no-untyped-call]  # IPython is unannotated


# --- What a figure draws, and its words -----------------------------------------------------------


def figure_data_sha256(figure: Any) -> str:
    """A hash of the numbers a figure draws, in order: every line's points, every collection's paths and
    offsets (a band's outline, a scatter's points), every patch an axes holds (bars, histograms, filled
    areas: their outlines in data coordinates) and every image's array.

    Two drawings with the same hash plot the same arrays, whatever their words (compare drawn figures:
    tick marks, which are lines too, are placed when a figure is drawn). Legend handles hash alike in
    both languages; the legend's frame and the axes' background patch are not data and are left out.
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


def translate_text(words: str, table: dict[str, str]) -> str:
    """One figure text in Chinese: found whole in ``table``, or each entry found inside it replaced,
    longest first (``"no scale ($c = 1$), same lr (0.25)"``)."""
    new = table.get(words)
    if new is not None:
        return new
    for piece in sorted(table, key=len, reverse=True):
        new = (new if new is not None else words).replace(piece, table[piece])
    return words if new is None or new == words else chinese_brackets(new)


HALF_WIDTH_AFTER_FULL = re.compile(r"（(?P<inner>[^（）]*)），(?P<what>[^()（）]*?) \((?P<number>[^()]*)\)$")
HALF_WIDTH_AFTER_CJK = re.compile(r"(?<=[\u4e00-\u9fff）]) \((?P<inner>[^()]*)\)")


def chinese_brackets(text: str) -> str:
    """A text translated piece by piece, with its English half-width brackets made Chinese (zh.md LAYOUT-6):
    "不缩放（$c = 1$），同一学习率 (0.25)" → "不缩放（$c = 1$，同一学习率 0.25）";
    "…学习率 (0.25)" → "…学习率（0.25）"."""
    text = HALF_WIDTH_AFTER_FULL.sub(r"（\g<inner>，\g<what> \g<number>）", text)
    return HALF_WIDTH_AFTER_CJK.sub(r"（\g<inner>）", text)


CJK_FONT = "Noto Sans CJK SC"  # Debian's fonts-noto-cjk, installed wherever the Chinese edition builds


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


# --- The copies a build-only cell glues ------------------------------------------------------------

FIGURE_CATALOG = Path(__file__).resolve().parents[1] / "locales" / "zh_CN" / "LC_MESSAGES" / "figures.po"
SOURCE_TEXTS_KEY = "Source-Texts"  # PNG metadata of a Chinese copy: its English texts (JSON), for tools.locale


def figure_words(catalog: Path = FIGURE_CATALOG) -> dict[str, str]:
    """msgid -> msgstr of every translated, non-fuzzy message of the figures' catalog."""
    from babel.messages.pofile import read_po

    with catalog.open("rb") as po:
        messages = [m for m in read_po(po) if m.id and m.string and not m.fuzzy and not m.pluralizable]
    return {str(m.id): str(m.string) for m in messages}


Drawing = Callable[[], Any]


def _layouts(name: str, draw: Callable[..., Any], wide: bool | Drawing) -> list[tuple[str, Drawing, bool]]:
    """``(suffix, drawing, for a slide)`` of each layout of figure ``name``: the phone's, and the wide one
    where ``wide`` asks for it (``True``: ``draw(wide=True)``; a function: that function)."""
    if not isinstance(name, str) or not re.fullmatch(r"fig_\w+", name):
        raise ValueError(f"name must be a figure glue name like 'fig_two_logits', got {name!r}")
    if not callable(draw):
        raise TypeError(f"draw must be a drawing function, got {type(draw).__name__}")
    if not isinstance(wide, bool) and not callable(wide):
        raise TypeError(f"wide must be a bool or a drawing function, got {type(wide).__name__}")
    layouts: list[tuple[str, Drawing, bool]] = [("", draw, False)]
    if wide is True:
        layouts.append(("_wide", lambda: draw(wide=True), True))
    elif wide is not False:
        layouts.append(("_wide", wide, True))
    return layouts


def glue_copies(
    name: str, draw: Callable[..., Any], *, wide: bool | Drawing = False, catalog: Path = FIGURE_CATALOG
) -> None:
    """Glue what the build shows of figure ``name`` besides the phone layout the chapter shows itself:
    with ``wide``, ``<name>_wide`` (:func:`slide_png` of the wide drawing, inside :func:`slide_style`);
    and the Chinese copies ``<name>_zh`` (and ``<name>_zh_wide``), as :func:`glue_chinese` glues them.

    ``wide=True`` draws the wide layout with ``draw(wide=True)``; ``wide`` may instead be the wide
    drawing function itself (``wide=draw`` for a one-panel figure). The wide English drawing is made
    once: it is glued, and it is the one the Chinese wide copy is compared with.
    """
    _chinese(name, _layouts(name, draw, wide), catalog, glue_english=True)


def glue_chinese(
    name: str, draw: Callable[..., Any], *, wide: bool | Drawing = False, catalog: Path = FIGURE_CATALOG
) -> None:
    """Glue the Chinese edition's copies of figure ``name`` (``fig_two_logits``): ``<name>_zh``, drawn by
    ``draw()``, and with ``wide`` also ``<name>_zh_wide`` (as in :func:`glue_copies`).

    Each layout is drawn twice: once left in English, once put into Chinese through ``figures.po``
    (:func:`translate_figure`). Both are rendered as the English figure is glued
    (:func:`figure_png_with_hash`, :func:`slide_png`) and must carry the same data hash, else
    ``ValueError`` names the figure. Each Chinese PNG also carries the English texts it translated
    (``Source-Texts``, JSON), from which ``tools.locale`` writes the catalog's messages. The cell shows
    nothing; book/_ext/zh_edition.py shows the copies on the Chinese pages.
    """
    _chinese(name, _layouts(name, draw, wide), catalog, glue_english=False)


def _chinese(name: str, layouts: list[tuple[str, Drawing, bool]], catalog: Path, glue_english: bool) -> None:
    words = figure_words(Path(catalog))
    for suffix, drawing, for_slide in layouts:
        with slide_style() if for_slide else nullcontext():
            english, chinese = drawing(), drawing()
            render = slide_png if for_slide else figure_png_with_hash  # as the English figure is glued
            if glue_english and for_slide:  # rendered as drawn, as a glue of its own is (read its texts after)
                english_png, texts = render(english), figure_texts(english)
            else:
                texts = figure_texts(english)
                english_png = render(english)
            extra = {SOURCE_TEXTS_KEY: json.dumps(texts, ensure_ascii=False)}
            png = render(translate_figure(chinese, words), extra)
        if _stamp(png) != _stamp(english_png):
            raise ValueError(f"{name}_zh{suffix}: the Chinese copy draws other data than the English figure")
        if glue_english and for_slide:
            glue(f"{name}{suffix}", english_png)
        glue(f"{name}_zh{suffix}", png)


def _stamp(png: Any) -> str:
    """The ``Data-SHA256`` a PNG (an ``IPython.display.Image``) carries."""
    from PIL import Image

    return str(Image.open(io.BytesIO(png.data)).info["Data-SHA256"])
