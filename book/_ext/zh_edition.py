"""What the Chinese edition's build translates besides the pages' own messages.

``tools/locale.py`` adds this extension to the Chinese build only (``_build/_config_zh.yml``).
Sphinx translates each page's paragraphs, titles and captions from its catalog; these strings
reach the page some other way, and a Chinese reader saw them in English (the zh review's
findings F9, F10, F14):

- **Code-cell toggles**. myst-nb writes each folded cell's summary ("Show code cell source",
  or the cell's own label from its metadata, ``mystnb.code_prompt_show``) after every transform
  of the page, from the notebook's metadata, which gettext never sees. Their translations live in
  ``locales/zh_CN/LC_MESSAGES/cells.po`` (``tools/locale.py`` extracts the labels from the
  notebooks); a post-transform after myst-nb's ``HideInputCells`` swaps them in.
- **Exercise titles in solution boxes**. sphinx-exercise keeps a copy of each exercise,
  taken when its directive runs, before Sphinx translates the page, and titles the solution
  from that copy: the solution said 「解答 练习 3.1 (The two-logit Jacobian)」. Once the page is
  translated, the copy is taken again.
- **Figures**. A figure that a chapter glues a second time with Chinese words from the same
  arrays (``<name>_zh``, its data hash in the PNG: tools.figures.glue_copies) replaces the English
  one, on the landing page (chapter 6's whole-chain figure) and on the chapter's own page.
- **The themes' own strings**. sphinx-book-theme translates its buttons from its own
  catalog (``booktheme``), whose zh_CN entries are Taiwanese usage (「列印成 PDF」) and
  incomplete; ``locales/zh_CN/LC_MESSAGES/booktheme.po`` goes in front of it. (pydata-sphinx-theme's
  and Sphinx's strings come from the ``sphinx`` catalog, where ``locales/zh_CN/LC_MESSAGES/sphinx.po``
  is already first.)

Upstream, at the checked releases (``setup`` stops the build on any other):
myst-nb 1.4.0 (myst_nb/sphinx_.py#L508-L572, ``HideInputCells``, priority 199);
sphinx-exercise 1.2.1 (sphinx_exercise/directive.py#L165-L172, the registry's copy;
post_transforms.py#L128-L187, the solution's title from it); sphinx-book-theme 1.2.0
(sphinx_book_theme/__init__.py#L218, ``add_message_catalog("booktheme", …)``).
"""

from __future__ import annotations

import gettext
import io
import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root: tools/ is a package
from tools.notebook_format import (  # noqa: E402
    ZH_AUTHOR_AND,
    ZH_CITATION_SEP,
    ZH_ET_AL,
    ZH_TOOLTIP_STYLE,
    ZH_YEAR_SEP,
    chinese_copy,
)
from tools.upstream import require  # noqa: E402

CATALOGS = ROOT / "locales" / "zh_CN" / "LC_MESSAGES"


def read_translations(name: str) -> dict[str, str]:
    """msgid -> msgstr of one catalog under locales/zh_CN/LC_MESSAGES, translated and not fuzzy."""
    from babel.messages.pofile import read_po

    path = CATALOGS / f"{name}.po"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        catalog = read_po(handle, locale="zh_CN")
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


class TranslatedCodePrompts(SphinxPostTransform):
    """The summaries of folded code cells, from cells.po (after myst-nb has written them)."""

    default_priority = 200  # myst-nb's HideInputCells is 199
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        from myst_nb.sphinx_ import HideCodeCellNode

        table = self.app.env.zh_cell_messages  # type: ignore[attr-defined]
        for node in self.document.findall(HideCodeCellNode):
            for key in ("prompt_show", "prompt_hide"):
                node[key] = table.get(node[key], node[key])


class TranslatedTables(SphinxPostTransform):
    """The tables that code cells print (helpers.table): caption, headers, data-labels and text
    cells from cells.po (``tools.locale.translate_table``); a number cell stays byte for byte the
    English one, and a translated cell keeps its numbers (tests/test_locale.py)."""

    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        from tools.locale import is_book_table, translate_table

        table = self.app.env.zh_cell_messages  # type: ignore[attr-defined]
        for raw in self.document.findall(nodes.raw):
            if "html" in raw.get("format", "").split() and is_book_table(raw.astext()):
                raw.replace_self(nodes.raw("", translate_table(raw.astext(), table), format=raw["format"]))


class TranslatedPrintedLines(SphinxPostTransform):
    """What code cells print (stdout) in the book's words, from cells.po (``tools.locale.translate_printed``):
    each line's numbers are the printed ones, put back into its Chinese line."""

    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        from tools.locale import translate_printed

        table = self.app.env.zh_cell_messages  # type: ignore[attr-defined]
        for block in self.document.findall(nodes.literal_block):
            if {"output", "stream"} <= set(block.get("classes", [])) and "stderr" not in block.get("classes", []):
                text = block.astext()
                chinese = translate_printed(text, table)
                if chinese != text:
                    block.children = [nodes.Text(chinese)]
                    block.rawsource = chinese


ARTICLE_LABEL = re.compile(r"^（§([^）]+)）：$")
LOST_COMMAS = "；本书所用的原文副本缺了逗号"


def restored(box: str) -> str:
    """What a box's quotes put back that the copy lost: every ``=``, and a ``，`` where two numbers or words
    would run together (the copy has neither, so each one in a quote is the book's)."""
    quote = box.split("原文（§", 1)[-1].split("检验范围", 1)[0]  # the article's sentence, before the scope
    parts = "".join(re.findall(r"「[^」]*」", box))  # and each part's quote
    signs = [name for sign, name in (("=", "等号"), ("，", "部分逗号")) if sign in quote + parts]
    return f"，{'和'.join(signs)}为本书补回" if signs else ""


class ArticleCopyNote(SphinxPostTransform):
    """A verdict box quotes the article in its own words (原文). The plain-text copy the book quotes lost
    every comma and every ``=`` of its web page: the ``=`` signs are put back, and a comma only where two
    numbers or words would otherwise read as one (「65504，exp(20)」). Each box's label says so, once, so
    that a reader does not take the run-on text for the book's typo:
    「**原文**（§3.3；本书所用的原文副本缺了逗号，等号和部分逗号为本书补回）：」."""

    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        for strong in list(self.document.findall(nodes.strong)):
            label = strong.parent
            shown = [child for child in label.children if child.astext()]  # (the translation leaves an empty Text)
            if strong.astext() != "原文" or not isinstance(label, nodes.paragraph) or len(shown) != 2:
                continue
            tail = shown[1]
            match = ARTICLE_LABEL.match(tail.astext()) if isinstance(tail, nodes.Text) else None
            if match:
                box = label.parent.astext() if label.parent is not None else ""
                label.replace(tail, nodes.Text(f"（§{match.group(1)}{LOST_COMMAS}{restored(box)}）："))


GENERATED_FIGURE = re.compile(r"^(?P<folder>(?:.*/)?_generated/)(?P<name>\w+)\.png$")


class ChineseFigures(SphinxTransform):
    """A page that shows a glued figure from ``_generated/<name>.png`` (the landing page) shows
    ``<name>_zh.png`` where a notebook glues a Chinese copy of it (drawn from the same arrays,
    tools.figures.translate_figure); book/_ext/wide_figures.py then pairs it with ``<name>_zh_wide``.
    A read-phase transform, so that Sphinx collects and copies the image it names."""

    default_priority = 400

    def apply(self, **kwargs: Any) -> None:
        for image in self.document.findall(nodes.image):
            match = GENERATED_FIGURE.match(image.get("uri", ""))
            chinese = ROOT / "book" / "_generated" / f"{match['name']}_zh.png" if match else None
            if chinese is not None and chinese.is_file():
                image["uri"] = f"{match['folder']}{match['name']}_zh.png"
                self.env.note_dependency(str(chinese))  # a new Chinese copy re-reads the page
        # A download link to a glued figure (the instructor guide's anchor figure, in both layouts)
        # offers its Chinese copy: fig_x_wide.png -> fig_x_zh_wide.png.
        for link in self.document.findall(addnodes.download_reference):
            match = GENERATED_FIGURE.match(link.get("reftarget", ""))
            chinese = ROOT / "book" / "_generated" / f"{chinese_copy(match['name'])}.png" if match else None
            if chinese is not None and chinese.is_file():
                link["reftarget"] = f"{match['folder']}{chinese.name}"
                self.env.note_dependency(str(chinese))
        # A chapter's own figure (a cell's output, named ``fig-two-logits`` in its metadata) shows its
        # Chinese copy, ``fig_two_logits_zh`` (tools.figures.glue_copies), where the notebook glues one.
        for figure in self.document.findall(nodes.figure):
            images = list(figure.findall(nodes.image))
            names = [n.replace("-", "_") for n in figure.get("names", []) + figure.get("ids", [])]
            copies = [ROOT / "book" / "_generated" / f"{n}_zh.png" for n in names if n.startswith("fig_")]
            chinese = next((c for c in copies if c.is_file()), None)
            if chinese is not None and len(images) == 1 and not GENERATED_FIGURE.match(images[0].get("uri", "")):
                images[0]["uri"] = f"/book/_generated/{chinese.name}"  # from the source folder
                images[0].attributes.pop("candidates", None)
                self.env.note_dependency(str(chinese))


class TranslatedExerciseCopies(SphinxTransform):
    """After Sphinx has translated the page (the i18n transform, priority 20), sphinx-exercise's
    registry gets a fresh copy of each exercise, so that its solution's title is translated too."""

    default_priority = 25

    def apply(self, **kwargs: Any) -> None:
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node

        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for node in self.document.findall(lambda n: isinstance(n, (exercise_node, exercise_enumerable_node))):
            entry = registry.get(node.get("label"))
            if entry is not None and entry.get("docname") == self.env.docname:
                entry["node"] = node.deepcopy()


class FullWidthExerciseParentheses(SphinxPostTransform):
    """「练习 3.1（两个 logit 的雅可比矩阵，★，10 分钟）」: sphinx-exercise wraps a title's subtitle in " (" and
    ")" (post_transforms.py#L105-L111 and #L166-L176), half-width in a Chinese title (the zh review's layout
    items); the subtitle's own「（★，10 分钟）」 joins the one pair of brackets (zh-read B9). A solution is
    titled「练习 3.1（……）的解答」, the Chinese order, where sphinx-exercise writes "Solution to" first."""

    default_priority = 23  # after the exercise (20) and solution (21, 22) titles are resolved

    def run(self, **kwargs: Any) -> None:
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

        kinds = (exercise_node, exercise_enumerable_node, solution_node)
        for box in self.document.findall(lambda n: isinstance(n, kinds)):
            if not box.children or not isinstance(box.children[0], nodes.title):
                continue
            title = box.children[0]
            for text in list(title.findall(nodes.Text)):
                if str(text) in (" (", ")"):
                    text.parent.replace(text, nodes.Text("（" if str(text) == " (" else "）"))
            texts = list(title.findall(nodes.Text))
            closing = [i for i, text in enumerate(texts) if str(text) == "）"]
            if closing and closing[-1] > 0:
                before = texts[closing[-1] - 1]
                inner = str(before).rfind("（★")
                if inner >= 0 and str(before).endswith("）"):
                    # 「哪一行传递的梯度最多？★★★，30 分钟」: a question or exclamation mark needs no comma after it
                    comma = "" if str(before)[:inner].endswith(("？", "！")) else "，"
                    joined = str(before)[:inner] + comma + str(before)[inner + 1 : -1]
                    before.parent.replace(before, nodes.Text(joined))
            head = title.children[0] if title.children else None
            reference = title.children[1] if len(title.children) > 1 else None
            solution = isinstance(box, solution_node) and isinstance(head, nodes.Text) and str(head).strip() == "解答"
            if solution and isinstance(reference, nodes.reference) and reference.children:
                first = reference.children[0]
                if isinstance(first, nodes.Text):
                    reference.replace(first, nodes.Text(str(first).lstrip()))
                title.remove(head)
                title += nodes.Text("的解答")


def theme_strings_first(app: Any) -> None:
    """booktheme.po in front of sphinx-book-theme's own zh_CN catalog."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from sphinx import locale

    path = CATALOGS / "booktheme.po"
    if not path.is_file():
        return
    with path.open("rb") as handle:
        catalog = read_po(handle, locale="zh_CN")
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    ours = gettext.GNUTranslations(compiled)
    theirs = locale.translators.get(("general", "booktheme"))
    if theirs is not None:
        ours.add_fallback(theirs)
    locale.translators[("general", "booktheme")] = ours


def launch_tooltips(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """sphinx-book-theme glues its launch tooltips ("Launch on" + " Colab"): in Chinese the place
    comes first (「在 Colab 上启动」)."""

    def visit(buttons: list[dict[str, Any]]) -> None:
        for button in buttons:
            tooltip = button.get("tooltip", "")
            if tooltip.startswith("Launch on "):
                button["tooltip"] = f"在 {tooltip.removeprefix('Launch on ')} 上启动"
            visit(button.get("buttons", []))

    visit(context.get("header_buttons", []))


# Sphinx's HTML writer ends every caption number with a space inside its span (add_fignumber,
# sphinx/writers/html5.py#L402 at 7.4.7): 「练习 3.1 （……）」 showed a double gap, since a full-width
# parenthesis carries its own space (zh-read-s7 LA2). A figure's 「图 3.1 标题」 keeps its space.
CAPTION_NUMBER_SPACE = re.compile(r'(<span class="caption-number">[^<]*?) </span>(?=（)')


def caption_numbers_before_parentheses(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """「练习 3.1（两个 logit 的雅可比矩阵，★，10 分钟）」, 「定理 3.1（……）」: no space before 「（」."""
    if "body" in context:
        context["body"] = CAPTION_NUMBER_SPACE.sub(r"\1</span>", context["body"])


AUTHOR_JOINS = [(" and others", ZH_ET_AL), (", and ", ZH_AUTHOR_AND), (" and ", ZH_AUTHOR_AND)]


def chinese_citations(app: Any, doctree: nodes.document, docname: str) -> None:
    """Inline author-year citations in the Chinese form: 「Kingma 和 Ba，2015」, 「Liu 等，2022；Dao 等，2022」
    (sphinxcontrib-bibtex joins authors with " and " and abbreviates with *et al.*). The
    bibliography itself stays in its original language, as Chinese books print it."""
    for citation in doctree.findall(
        lambda n: isinstance(n, nodes.Element) and "bibtex-citation" in n.get("classes", [])
    ):
        for emphasis in list(citation.findall(nodes.emphasis)):
            if emphasis.astext() == "et al.":
                emphasis.replace_self(nodes.Text(ZH_ET_AL.strip()))
        for text in list(citation.findall(nodes.Text)):
            value = str(text)
            for english, chinese in AUTHOR_JOINS:
                value = value.replace(english, chinese)
            # full-width separators: 「Liu 等，2022」 inside a reference, 「；」 between two references
            value = value.replace(", ", ZH_YEAR_SEP if text.parent is not citation else ZH_CITATION_SEP)
            if value != str(text):
                text.parent.replace(text, nodes.Text(value))


def register_tooltip_style() -> None:
    """A citation's tooltip in the Chinese edition: the reference (authors, title, venue, year), as
    printed in its own language, without the ``note`` that references.bib adds to most entries: that
    note is the book's own English prose (zh-read-s7 EN5). ``tools/locale.py`` sets
    ``bibtex_tooltips_style`` to it; the bibliography page keeps the notes."""
    from pybtex.database import Entry
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.plain import Style

    class WithoutNotes(Style):  # type: ignore[misc]
        def format_entry(self, label: str, entry: Any, bib_data: Any = None) -> Any:
            fields = {key: value for key, value in entry.fields.items() if key.lower() != "note"}
            bare = Entry(entry.type, fields=fields, persons=entry.persons)
            bare.key = entry.key
            return super().format_entry(label, bare, bib_data)

    register_plugin("pybtex.style.formatting", ZH_TOOLTIP_STYLE, WithoutNotes, force=True)


def remember_cell_messages(app: Any) -> None:
    app.env.zh_cell_messages = read_translations("cells")


def setup(app: Any) -> dict[str, Any]:
    patch = "zh_edition.py (the Chinese edition's toggles, solution titles and theme strings)"
    require("myst-nb", "1.4.0", patch, "HideInputCells, myst_nb/sphinx_.py#L508-L572 (priority 199)")
    require(
        "sphinx-exercise",
        "1.2.1",
        patch,
        "the registry's copy of an exercise, sphinx_exercise/directive.py#L165-L172, "
        "and the solution's title from it, post_transforms.py#L128-L187",
    )
    require("sphinx-book-theme", "1.2.0", patch, 'add_message_catalog("booktheme"), sphinx_book_theme/__init__.py#L218')
    register_tooltip_style()
    app.add_post_transform(TranslatedCodePrompts)
    app.add_post_transform(TranslatedTables)
    app.add_post_transform(TranslatedPrintedLines)
    app.add_post_transform(ArticleCopyNote)
    app.add_transform(TranslatedExerciseCopies)
    app.add_transform(ChineseFigures)
    app.add_post_transform(FullWidthExerciseParentheses)
    app.connect("builder-inited", theme_strings_first)
    app.connect("builder-inited", remember_cell_messages)
    app.connect("html-page-context", launch_tooltips, priority=990)
    app.connect("html-page-context", caption_numbers_before_parentheses)
    app.connect("doctree-resolved", chinese_citations)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
