"""The build side's figures (tools/figures.py): the data hash, the Chinese copies, the slide layout, and every
chapter's glued copies."""

from __future__ import annotations

import io
import json
import re
from contextlib import nullcontext
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import helpers
from tools import figures

matplotlib.use("Agg")

CATALOG = """msgid ""
msgstr ""
"Language: zh_CN\\n"
"Content-Type: text/plain; charset=utf-8\\n"

msgid "key width $d_k$"
msgstr "键维度 $d_k$"

msgid "accuracy"
msgstr "准确率"

msgid ", same lr"
msgstr "，同一学习率"

msgid "no scale ($c = 1$)"
msgstr "不缩放（$c = 1$）"
"""


def draw(wide: bool = False, shift: float = 0.0):
    """Every kind of data a book figure draws: a line, a band, a scatter, bars, an image."""
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2) if wide else plt.subplots(2, 1)
    x = np.arange(5.0)
    axes[0].plot(x, x**2 + shift, label="no scale ($c = 1$), same lr")
    axes[0].fill_between(x, x, x + 1, alpha=0.25)
    axes[0].scatter(x, np.sqrt(x))
    axes[0].set(xlabel="key width $d_k$", ylabel="accuracy")
    axes[0].legend()
    axes[1].bar(x, x + 1)
    axes[1].imshow(np.arange(6.0).reshape(2, 3))
    return figure


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "figures.po"
    path.write_text(CATALOG, encoding="utf-8")
    return path


def test_the_hash_sees_lines_bands_scatters_bars_and_images_but_not_words():
    import matplotlib.pyplot as plt

    helpers.use_book_style()
    base = figures.figure_data_sha256(draw())
    words = draw()
    figures.translate_figure(words, {"accuracy": "准确率", "key width $d_k$": "键维度 $d_k$"})
    assert figures.figure_data_sha256(words) == base  # the same arrays in other words
    changes = {
        "line": lambda f: f.axes[0].lines[0].set_ydata(np.arange(5.0)),
        "band": lambda f: f.axes[0].fill_between([0, 1], [0, 0], [2, 2]),
        "scatter": lambda f: f.axes[0].collections[1].set_offsets(np.zeros((5, 2)) + 1),
        "bar": lambda f: f.axes[1].patches[0].set_height(9.0),
        "image": lambda f: f.axes[1].images[0].set_data(np.ones((2, 3))),
    }
    for kind, change in changes.items():
        figure = draw()
        change(figure)
        assert figures.figure_data_sha256(figure) != base, f"the hash does not see a changed {kind}"
    plt.close("all")


def test_translate_text_whole_then_pieces_longest_first():
    table = {"no scale ($c = 1$)": "不缩放（$c = 1$）", ", same lr": "，同一学习率", "same": "同"}
    # a text put together from pieces gets Chinese brackets (zh.md LAYOUT-6: no "），" and no "(0.25)" beside CJK)
    assert figures.translate_text("no scale ($c = 1$), same lr (0.25)", table) == "不缩放（$c = 1$，同一学习率 0.25）"
    assert figures.translate_text("same lr (0.25)", {"same lr": "同一学习率"}) == "同一学习率（0.25）"
    assert figures.translate_text("$c = 1/d_k$ (0.5)", table) == "$c = 1/d_k$ (0.5)"  # no Chinese: as drawn
    assert figures.translate_text("accuracy", {"accuracy": "准确率"}) == "准确率"
    assert figures.translate_text("$d_k$", table) == "$d_k$"
    assert figures.english_words("键维度 $d_k$ at 64") == ["at"]
    assert figures.english_words("$\\sqrt{d_k}$ (a)") == []


def test_figure_texts_are_the_worded_texts_only():
    import matplotlib.pyplot as plt

    helpers.use_book_style()
    figure = draw()
    texts = figures.figure_texts(figure)
    plt.close(figure)
    assert texts == ["key width $d_k$", "accuracy", "no scale ($c = 1$), same lr"]


def test_glue_chinese_glues_twins_with_the_english_hash_and_texts(catalog, monkeypatch):
    import matplotlib.pyplot as plt
    from PIL import Image

    plt.close("all")
    helpers.use_book_style()
    glued = {}
    monkeypatch.setattr("tools.figures.glue", lambda name, value: glued.setdefault(name, value))
    assert (
        figures.glue_chinese("fig_test", draw, wide=True, catalog=catalog) is None
    )  # a cell ending in it shows nothing
    assert list(glued) == ["fig_test_zh", "fig_test_zh_wide"]
    glued_once = dict(glued)
    glued.clear()
    figures.glue_chinese("fig_test", draw, wide=lambda: draw(wide=True), catalog=catalog)  # the wide drawing itself
    assert [stamp(glued[n].data)["Data-SHA256"] for n in glued] == [
        stamp(glued_once[n].data)["Data-SHA256"] for n in glued
    ]
    for name, wide in (("fig_test_zh", False), ("fig_test_zh_wide", True)):
        with figures.slide_style() if wide else nullcontext():  # as the English figures are glued
            english = (figures.slide_png if wide else figures.figure_png_with_hash)(draw(wide=wide))
        info = Image.open(io.BytesIO(glued[name].data)).info
        assert info["Data-SHA256"] == Image.open(io.BytesIO(english.data)).info["Data-SHA256"]
        assert json.loads(info[figures.SOURCE_TEXTS_KEY]) == [
            "key width $d_k$",
            "accuracy",
            "no scale ($c = 1$), same lr",
        ]
    assert "Min-Font-Pt" in Image.open(io.BytesIO(glued["fig_test_zh_wide"].data)).info
    assert plt.get_fignums() == []  # every drawing is closed


def test_glue_chinese_raises_naming_the_figure_when_the_twins_differ(catalog, monkeypatch):
    import matplotlib.pyplot as plt

    plt.close("all")
    monkeypatch.setattr("tools.figures.glue", lambda name, value: None)
    calls = iter(range(10))

    def unsteady(wide: bool = False):
        return draw(wide, shift=next(calls))  # each call draws other data: not one array twice

    with pytest.raises(ValueError, match="fig_unsteady_zh"):
        figures.glue_chinese("fig_unsteady", unsteady, catalog=catalog)
    assert plt.get_fignums() == []


def test_glue_chinese_checks_its_arguments_and_needs_the_catalog(catalog, tmp_path, monkeypatch):
    glued = []
    monkeypatch.setattr("tools.figures.glue", lambda name, value: glued.append(name))
    with pytest.raises(ValueError, match="name"):
        figures.glue_chinese("two logits", draw, catalog=catalog)
    with pytest.raises(TypeError, match="draw"):
        figures.glue_chinese("fig_x", "draw", catalog=catalog)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="wide"):
        figures.glue_chinese("fig_x", draw, wide="yes", catalog=catalog)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):  # the build side always has the catalog: its absence is an error
        figures.glue_chinese("fig_x", draw, catalog=tmp_path / "none.po")
    assert glued == []


def test_glue_copies_glues_the_wide_layout_and_the_chinese_copies(catalog, monkeypatch):
    """One call per figure: the wide layout as slide_png draws it, and the Chinese copies with its data hash."""
    import matplotlib.pyplot as plt
    from PIL import Image

    plt.close("all")
    helpers.use_book_style()
    glued = {}
    monkeypatch.setattr("tools.figures.glue", lambda name, value: glued.setdefault(name, value))
    figures.glue_copies("fig_test", draw, wide=True, catalog=catalog)
    assert sorted(glued) == ["fig_test_wide", "fig_test_zh", "fig_test_zh_wide"]
    with figures.slide_style():
        wide = figures.slide_png(draw(wide=True))
    assert glued["fig_test_wide"].data == wide.data  # the wide layout, as the English glue of a slide
    info = Image.open(io.BytesIO(glued["fig_test_zh_wide"].data)).info
    assert info["Data-SHA256"] == Image.open(io.BytesIO(wide.data)).info["Data-SHA256"]
    glued.clear()
    figures.glue_copies("fig_test", draw, catalog=catalog)  # a figure without a wide layout: its Chinese copy only
    assert list(glued) == ["fig_test_zh"]
    assert plt.get_fignums() == []


def test_slide_sizes_are_derived_for_18_px_on_a_1280_x_720_slide():
    # text of SLIDE_FONT_PT at DPI, shown down to SLIDE_MIN_SCALE of its natural size, is >= 18 CSS px
    assert figures.SLIDE_FONT_PT * helpers.style.DPI / 72 * figures.SLIDE_MIN_SCALE >= figures.SLIDE_TEXT_PX >= 18
    assert (
        figures.SLIDE_FONT_PT - 0.5
    ) * helpers.style.DPI / 72 * figures.SLIDE_MIN_SCALE < figures.SLIDE_TEXT_PX  # no larger
    for width, height in (
        helpers.style.SLIDE_FIGSIZE,
        figures.SLIDE_PANEL_FIGSIZE,
    ):  # natural size within the slide's room
        assert width * helpers.style.DPI <= 1280 - 2 * 24 and height * helpers.style.DPI <= 490


def test_slide_style_is_restored_and_slide_png_lifts_small_text():
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    matplotlib.use("Agg")
    helpers.use_book_style()
    before = dict(matplotlib.rcParams)
    with figures.slide_style():
        assert matplotlib.rcParams["xtick.labelsize"] == figures.SLIDE_FONT_PT
        figure, ax = plt.subplots()
        assert tuple(figure.get_size_inches()) == figures.SLIDE_PANEL_FIGSIZE
        ax.plot([1, 10], [1, 2], label="a line")
        ax.legend(fontsize=9)  # a web layout's size: the slide raises it
        ax.set_xticks([1, 5, 10], ["1", "5", "10"], fontsize=8)
        ax.annotate("note", (2, 1.5), fontsize=7)
        image = figures.slide_png(figure)
    assert dict(matplotlib.rcParams) == before  # the web figures after it are drawn as before
    assert not plt.fignum_exists(figure.number)
    info = Image.open(io.BytesIO(image.data)).info
    assert float(info["Min-Font-Pt"]) == figures.SLIDE_FONT_PT
    assert round(info["dpi"][0]) == helpers.style.DPI and len(info["Data-SHA256"]) == 64


def test_smallest_text_pt_reads_every_drawn_text():
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    helpers.use_book_style()
    figure, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    ax.legend(fontsize=7)
    assert figures.smallest_text_pt(figure) == 7
    ax.get_legend().remove()
    assert figures.smallest_text_pt(figure) == helpers.style.TICK_FONT_PT  # the tick labels (no axis label is set)
    plt.close(figure)


# --- Every chapter's figures ----------------------------------------------------------------------


def glued_figure_pngs(path) -> dict[str, bytes]:
    """name -> PNG bytes of every figure a notebook glues (committed outputs)."""
    import base64

    from tools.notebook_format import GLUE_PREFIX, read

    found = {}
    for cell in read(path).cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
            png = output.get("data", {}).get(GLUE_PREFIX + "image/png")
            if name.startswith("fig_") and png:
                found[name] = base64.b64decode(png if isinstance(png, str) else "".join(png))
    return found


def stamp(png: bytes) -> dict[str, str]:
    from PIL import Image

    return dict(Image.open(io.BytesIO(png)).info)


def named_figures(path) -> set[str]:
    """The names of the figures a chapter shows inline (``mystnb.figure.name`` of a cell: ``fig-overflow``)."""
    from tools.notebook_format import read

    return {c.metadata.get("mystnb", {}).get("figure", {}).get("name", "") for c in read(path).cells} - {""}


def english_figures(names) -> set[str]:
    """The figures a chapter publishes: ``fig_x`` and ``fig_x_wide`` are one figure, ``fig_x``."""
    return {name.removesuffix("_wide") for name in names if not name.removesuffix("_wide").endswith("_zh")}


def test_every_figure_has_a_chinese_twin_with_its_data_hash():
    """Every ``fig_*`` glue has its ``_zh`` twin (a ``_wide`` one its ``_zh_wide`` twin), stamped with
    the same data hash as the English PNG where that carries one (the wide layouts, tools.figures.slide_png),
    in every chapter."""
    from tools.notebook_format import chapter_notebooks

    twins = 0
    for path in chapter_notebooks():
        pngs = glued_figure_pngs(path)
        missing = []
        for base in sorted(english_figures(pngs)):
            for suffix in ("", "_wide"):
                english = pngs.get(base + suffix)
                if english is None:
                    continue
                chinese = pngs.get(f"{base}_zh{suffix}")
                if chinese is None:
                    missing.append(f"{base}_zh{suffix}")
                    continue
                hashes = stamp(english).get("Data-SHA256"), stamp(chinese).get("Data-SHA256")
                assert hashes[1] and len(hashes[1]) == 64, f"{path.stem}: {base}_zh{suffix} carries no data hash"
                if hashes[0] is not None:
                    assert hashes[0] == hashes[1], (
                        f"{path.stem}: {base}_zh{suffix} draws other data than {base}{suffix}"
                    )
                    twins += 1
        assert not missing, f"{path.stem}: no Chinese copy of {missing} (tools.figures.glue_copies)"
        # a Chinese copy has its English figure: glued, or a figure the page shows inline (fig-overflow in a
        # cell's metadata; glue_chinese drew both copies and compared their data hashes when it ran)
        shown = {name.replace("-", "_") for name in named_figures(path)}
        for name in pngs:
            if "_zh" in name:
                english = name.replace("_zh", "", 1)
                assert english in pngs or english + "_wide" in pngs or english in shown, name
    assert twins >= 1  # at least the whole-chain figure's wide layouts


def test_every_chinese_figure_text_is_translated():
    """Each text of a Chinese figure copy (its English texts, stamped by glue_chinese) is in figures.po,
    or wholly put into Chinese by its pieces, and keeps no English word that no translation keeps;
    and tools.locale would write figures.po as it is (its messages are the figures' own words)."""
    from tools.figures import english_words, figure_words, translate_text
    from tools.locale import FIGURES, figure_messages, figure_sources

    words = figure_words(FIGURES)
    kept = {word for string in words.values() for word in english_words(string)}
    sources = figure_sources()
    assert sources, "no Chinese figure copy stamps its texts"
    untranslated = [
        f"{figure}: {text!r}"
        for figure, texts in sources.items()
        for text in texts or []
        if set(english_words(translate_text(text, words))) - kept
    ]
    assert not untranslated, "untranslated figure texts (make locale, then translate figures.po):\n" + "\n".join(
        untranslated
    )
    from babel.messages.pofile import read_po

    with FIGURES.open("rb") as po:
        ids = [m.id for m in read_po(po) if m.id]
    assert ids == figure_messages(sources, words), "figures.po is not what make locale writes from the figures"


def test_chinese_pages_show_only_the_chinese_figures(built_site):
    """On each built Chinese chapter page, a figure of that page (a cell's figure, ``fig-two-logits``)
    with a Chinese copy is shown as that copy, in both layouts, and its figure shows no other image.
    (Download links to a glued figure, as the instructor guide's, stay as they are.)"""
    from tools.notebook_format import chapter_notebooks, read

    shown = 0
    for path in chapter_notebooks():
        page = (built_site / "zh" / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")
        pngs = glued_figure_pngs(path)
        for cell in read(path).cells:
            label = cell.metadata.get("mystnb", {}).get("figure", {}).get("name", "")
            base = label.replace("-", "_")
            if not label or f"{base}_zh" not in pngs:
                continue
            figure = re.search(rf'<figure[^>]*id="{re.escape(label)}".*?</figure>', page, re.S)
            assert figure, f"{path.stem}: no figure {label} on the Chinese page"
            images = re.findall(r'(?:src|srcset)="([^"]+)"', figure.group(0))
            wanted = {f"{base}_zh.png"} | ({f"wide_{base}_zh_wide.png"} if f"{base}_zh_wide" in pngs else set())
            assert {Path(src).name for src in images} == wanted, f"{path.stem}: {label} shows {images}"
            shown += 1
    assert shown >= 1
