"""The learner edition: every chapter notebook as it reads where a learner opens it.

    python -m tools.learner OUT      # write OUT/en/*.ipynb and OUT/zh_CN/*.ipynb

A product of the build, never committed: the English build of the site writes it into
``_build/html/learner/`` (``book/_ext/learner_links.py``), and ``make release`` publishes it
on the site and on the repository's ``notebooks`` branch, which Colab and Binder open
(``tools/release.py``). The chapter notebooks are written for the site: their prose is MyST,
which only Sphinx and myst-nb render. Colab, Binder's JupyterLab, VS Code and GitHub render
CommonMark, some HTML and math. The learner edition is the same notebook with its prose
rewritten for them, one edition per language (the Chinese one from the gettext catalogs).

- Every glued number becomes the value the committed run computed, formatted as the role
  asks (``{glue:text}`key:.3f```), and marked ``†``; one sentence at the top says that
  running the notebook recomputes them.
- Admonitions and theorems become block quotes with a bold title; dropdowns, proofs and
  solutions fold in ``<details>``; exercises stay visible.
- Labels disappear; headings carry the site's numbers (``## 3.2. …``); equations that the
  site numbers get ``\\tag{3.1}``. ``{ref}``, ``{numref}``, ``{eq}``, ``{prf:ref}``,
  ``{doc}``, ``{term}`` and ``{cite}`` become links to the page on the published site
  (``html.baseurl`` in ``_config.yml``), with the text the site shows.
- A figure's caption follows the cell that draws it, as a paragraph.
- Code cells are the chapter's, byte for byte, less its build-only cells (tagged
  ``remove-cell``: the site's, the slides' and the Chinese copies of figures); a setup cell
  that installs ``helpers`` where it is missing comes first (:func:`setup_cell`).
- Outputs are the committed run's (validated by strict nbval), so figures and tables show
  before anything runs; glue records, which no notebook front end displays, are dropped. In the
  Chinese edition a figure is its Chinese copy (glued as ``<name>_zh`` by a build-only cell,
  as the Chinese pages show it: ``book/_ext/zh_edition.py``) and a printed table is translated
  from ``cells.po`` (``tools.locale.translate_table``, as the Chinese pages translate it).

Any directive or role the converter does not know is rendered generically (its title in
bold and its body, or a role's text) and reported, so new prose never stops the build;
``tests/test_learner.py`` fails on whatever MyST is left.
"""

from __future__ import annotations

import argparse
import copy
import functools
import hashlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import tomllib
import yaml

from tools.helpers_index import chapter_label
from tools.locale import chinese_notebook, is_book_table, is_printed, translate_printed, translate_table, translations
from tools.notebook_format import (
    GLUE_PREFIX,
    ROOT,
    ZH_AUTHOR_AND,
    ZH_CITATION_SEP,
    ZH_ET_AL,
    ZH_YEAR_SEP,
    chapter_notebooks,
    chinese_copy,
    glued_outputs,
    is_build_only,
    read,
    tags,
    toc_files,
)

__all__ = ["LANGUAGES", "MARK", "NOTEBOOKS_BRANCH", "launch_urls", "parse", "setup_cell", "site_url", "write"]

LANGUAGES = ("en", "zh_CN")
MARK = "<sup>†</sup>"
FIGURES = {"figure", "glue:figure"}  # directives that Sphinx numbers as figures (when they have a name)
# The branch of the repository that the publishing workflow writes the learner notebooks to
# (``_build/release/notebooks``): what the site's Colab and Binder buttons open.
NOTEBOOKS_BRANCH = "notebooks"
DISTRIBUTION = "sqrt-dk-book-helpers"  # helpers' distribution (pyproject.toml), not its import name

# ---------------------------------------------------------------------------------------------
# Configuration: one place each (_config.yml, pyproject.toml)


@functools.cache  # one process, one configuration
def config() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def site_url(language: str = "en") -> str:
    """The published site of one edition, ending in ``/`` (the Chinese one lives under ``zh/``)."""
    base = config()["html"]["baseurl"].rstrip("/") + "/"
    return base if language == "en" else base + "zh/"


def repository() -> tuple[str, str]:
    """(owner, name) of the GitHub repository."""
    owner, name = config()["repository"]["url"].rstrip("/").split("/")[-2:]
    return owner, name


def wheel_name() -> str:
    """The file name of the helpers wheel that a release serves (``dist/`` on the site)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return f"{project['name'].replace('-', '_')}-{project['version']}-py3-none-any.whl"


def wheel_url() -> str:
    return f"{site_url()}dist/{wheel_name()}"


def notebook_path(pagename: str, language: str) -> str:
    """A learner notebook's path in the ``notebooks`` branch (and under ``learner/`` on the site)."""
    return f"{language}/{Path(pagename).name}.ipynb"


def launch_urls(pagename: str, language: str) -> dict[str, str]:
    """Where the site's launch buttons go for one chapter page: its learner notebook on the ``notebooks`` branch."""
    owner, name = repository()
    path = notebook_path(pagename, language)
    buttons = config().get("launch_buttons", {})
    colab = buttons.get("colab_url", "https://colab.research.google.com").rstrip("/")
    binder = buttons.get("binderhub_url", "https://mybinder.org").rstrip("/")
    interface = {"jupyterlab": "lab/tree", "classic": "tree"}[buttons.get("notebook_interface", "classic")]
    return {
        "Colab": f"{colab}/github/{owner}/{name}/blob/{NOTEBOOKS_BRANCH}/{path}",
        "Binder": f"{binder}/v2/gh/{owner}/{name}/{NOTEBOOKS_BRANCH}?urlpath={interface}/{path}",
    }


@dataclass(frozen=True)
class Edition:
    language: str
    words: dict[str, str]


WORDS_EN = {
    "fig": "Fig.",
    "exercise": "Exercise",
    "solution": "Solution to {}",
    "proof": "Proof",
    "proof_start": "*Proof.*",
    "titled": "{} ({})",
    "details": "Details",
    "note": (
        "*The learner edition of chapter {number} of [{book}]({url}). The outputs below are the book's own run, "
        "on a CPU. Run it top to bottom (**Run all**) to compute them again: the first code cell installs the "
        "book's `helpers` package where it is missing. Numbers marked † come from the book's run; on another "
        "machine or a GPU their last digits may differ.*"
    ),
    "interactive": "(Interactive on the book's website: {}.)",
    "interactive_link": "the explorer",
    "setup": (
        "# Setup: this book's `helpers` package ({distribution} {version}). Where it is missing (Colab, or a\n"
        "# notebook downloaded from the site), this installs it from the book's site; it needs torch and\n"
        "# matplotlib, which Colab has. In the book's own environments (make lab, Binder) it is there already."
    ),
    "failed": (
        "Could not install the book's helpers package. Download {url}\\n"
        "and install that file (in a notebook: %pip install <the file>), then run this cell again."
    ),
}
WORDS_ZH = {
    "fig": "图",
    "exercise": "练习",
    "solution": "{}的解答",
    "proof": "证明",
    "proof_start": "*证明：*",
    "titled": "{}（{}）",
    "details": "详情",
    "note": (
        "*这是《[{book}]({url})》第 {number} 章的学习版。下面的输出来自本书在 CPU 上的运行结果。"
        "从上到下运行全部单元格（**Run all**，中文界面为“全部运行”或“运行所有单元格”）即可重新计算："
        "缺少本书的 `helpers` 包时，第一个代码单元格会安装它。"
        "标有 † 的数字来自本书的运行结果；换一台机器或改用 GPU 时，最后几位可能不同。*"
    ),
    "interactive": "（本书网站上有可交互的版本：{}。）",
    "interactive_link": "探索器",
    "setup": (
        "# Setup: 本书的 `helpers` 包（{distribution} {version}）。缺少它时（Colab，\n"
        "# 或从网站下载的笔记本），这个单元从本书网站安装它；它需要 torch 和 matplotlib，\n"
        "# Colab 已有。在本书自己的环境里（make lab、Binder）它已安装。"
    ),
    "failed": (
        "未能安装本书的 helpers 包。请下载 {url}\\n"
        "并安装这个文件（在笔记本里：%pip install <文件>），然后重新运行本单元。"
    ),
}
# The title of a directive's box as the site writes it in each edition (sphinx-proof's kinds, then
# the admonitions): those the book uses. Another kind gets its name, title-cased, as sphinx-proof does.
DIRECTIVE_TITLES = {
    "prf:theorem": ("Theorem", "定理"),
    "prf:lemma": ("Lemma", "引理"),
    "prf:definition": ("Definition", "定义"),
    "prf:proof": ("Proof", "证明"),
    "note": ("Note", "注意"),
    "tip": ("Tip", "提示"),
    "hint": ("Hint", "提示"),
    "important": ("Important", "重要"),
    "warning": ("Warning", "警告"),
    "seealso": ("See also", "另请参阅"),
}


def directive_title(name: str, ctx: Context) -> str:
    """The title of a ``name`` box in this edition (an unlisted kind: its name, title-cased, as sphinx-proof does)."""
    english, chinese = DIRECTIVE_TITLES.get(name, (name.removeprefix("prf:").title(),) * 2)
    return chinese if ctx.zh() else english


def editions() -> dict[str, Edition]:
    return {"en": Edition("en", WORDS_EN), "zh_CN": Edition("zh_CN", WORDS_ZH)}


def book_title(language: str) -> str:
    if language == "en":
        return str(config()["title"])
    from tools.locale import ZH_TITLE

    return ZH_TITLE


def setup_cell(language: str) -> nbformat.NotebookNode:
    """The learner notebook's first code cell: installs ``helpers`` from the site's own wheel where it is
    missing, and says what to do if that fails. It asks for the distribution by its own name: PyPI has
    unrelated distributions that install a module ``helpers`` too."""
    words = editions()[language].words
    version = wheel_name().split("-")[1]
    source = "\n".join(
        [
            words["setup"].format(distribution=DISTRIBUTION, version=version),
            "import importlib",
            "from importlib.metadata import PackageNotFoundError, version",
            "",
            "try:",
            f'    version("{DISTRIBUTION}")',
            "except PackageNotFoundError:",
            f'    %pip install --quiet "{wheel_url()}"',
            "    importlib.invalidate_caches()",
            "    try:",
            f'        version("{DISTRIBUTION}")',
            "    except PackageNotFoundError:",
            f'        print("{words["failed"].format(url=wheel_url())}")',
        ]
    )
    cell = nbformat.v4.new_code_cell(source)
    cell.id = "setup-helpers"
    return cell


# ---------------------------------------------------------------------------------------------
# MyST blocks: text, code fences, display math and directives (nested)

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})[ \t]*(?P<info>.*?)\s*$")
DIRECTIVE_INFO = re.compile(r"^\{(?P<name>[\w:.-]+)\}[ \t]*(?P<argument>.*)$")
OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>.*?)\s*$")
LABEL_LINE = re.compile(r"^[ \t]*\((?P<label>[^()\s]+)\)=[ \t]*$")
MATH_LABEL = re.compile(r"^(?P<math>.*\$\$)[ \t]*\((?P<label>[^()\s]+)\)[ \t]*$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<title>.+?)[ \t]*#*[ \t]*$")
COMMENT_LINE = re.compile(r"^[ \t]*%")  # a MyST comment
BLOCK_BREAK = re.compile(r"^[ \t]*\+\+\+")


@dataclass
class Text:
    lines: list[str]


@dataclass
class Code:
    lines: list[str]  # the fence lines too, verbatim


@dataclass
class Math:
    lines: list[str]  # from the opening $$ to the closing $$
    label: str | None


@dataclass
class Label:
    label: str


@dataclass
class Directive:
    name: str
    argument: str
    options: dict[str, str]
    body: list[Any] = field(default_factory=list)
    indent: str = ""


Block = Text | Code | Math | Label | Directive


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence)


def parse(source: str) -> list[Block]:
    blocks, _ = _parse(source.split("\n"), 0, None)
    return blocks


def _parse(lines: list[str], i: int, closing: str | None) -> tuple[list[Block], int]:
    blocks: list[Block] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            blocks.append(Text(text.copy()))
            text.clear()

    while i < len(lines):
        line = lines[i]
        if closing is not None and _closes(line, closing):
            flush()
            return blocks, i + 1
        label = LABEL_LINE.match(line)
        if label:
            flush()
            blocks.append(Label(label.group("label")))
            i += 1
            continue
        fence = FENCE_OPEN.match(line)
        if fence and (fence.group("fence")[0] != ":" or fence.group("info").startswith("{")):
            directive = DIRECTIVE_INFO.match(fence.group("info"))
            flush()
            if directive:
                options: dict[str, str] = {}
                j = i + 1
                while j < len(lines) and OPTION.match(lines[j]):
                    option = OPTION.match(lines[j])
                    assert option
                    options[option.group("key")] = option.group("value")
                    j += 1
                body, i = _parse(lines, j, fence.group("fence"))
                name, argument = directive.group("name"), directive.group("argument")
                blocks.append(Directive(name, argument, options, body, fence.group("indent")))
            else:  # a code fence: verbatim up to its closing fence
                j = i + 1
                while j < len(lines) and not _closes(lines[j], fence.group("fence")):
                    j += 1
                blocks.append(Code(lines[i : j + 1]))
                i = j + 1
            continue
        if line.strip().startswith("$$"):
            flush()
            j = i
            # one line ($$ x $$) or up to the line that ends the display
            if not (len(line.strip()) > 2 and _ends_math(line.strip()[2:])):
                j = i + 1
                while j < len(lines) and not _ends_math(lines[j]):
                    j += 1
            last = lines[j] if j < len(lines) else ""
            labelled = MATH_LABEL.match(last)
            math = lines[i:j] + [labelled.group("math") if labelled else last]
            blocks.append(Math(math, labelled.group("label") if labelled else None))
            i = j + 1
            continue
        text.append(line)
        i += 1
    flush()
    return blocks, i


def _ends_math(line: str) -> bool:
    stripped = line.strip()
    return stripped.endswith("$$") or bool(MATH_LABEL.match(stripped))


def walk(blocks: list[Block]) -> Iterator[Block]:
    for block in blocks:
        yield block
        if isinstance(block, Directive):
            yield from walk(block.body)


# ---------------------------------------------------------------------------------------------
# The book's targets: labels, their pages, numbers and titles (as the site numbers them)


@dataclass
class Target:
    page: str  # Sphinx docname, e.g. notebooks/03_softmax_saturation
    anchor: str  # the HTML id on that page
    kind: str  # section, figure, equation, exercise, prf:theorem, ..., other
    number: str | None  # "3.2", as the site shows it
    title: str  # for a section its heading, for an exercise its title, else ""


@dataclass
class Book:
    """Everything the conversion of one edition needs to know about the whole book."""

    language: str
    bibliography: dict[str, str]  # bibtex key -> "Dao et al., 2022"
    targets: dict[str, Target] = field(default_factory=dict)
    headings: dict[tuple[str, int], list[str | None]] = field(default_factory=dict)  # (page, cell) -> numbers
    directives: dict[tuple[str, int], list[str | None]] = field(default_factory=dict)  # (page, cell) -> numbers
    figures: dict[tuple[str, int], str] = field(default_factory=dict)  # (page, code cell) -> its figure's number
    equations: dict[tuple[str, str], str] = field(default_factory=dict)  # (page, label) -> number
    chapters: dict[str, str] = field(default_factory=dict)  # page -> its number ("3", "7b")
    titles: dict[str, str] = field(default_factory=dict)  # page -> its title (its first heading)
    glue: dict[str, dict[str, str]] = field(default_factory=dict)  # page -> key -> text/plain
    glue_figures: dict[str, set[str]] = field(default_factory=dict)  # page -> keys of glued figures
    figure_pngs: dict[str, str] = field(default_factory=dict)  # glued figure -> its PNG (base64), every page's
    cell_messages: dict[str, str] = field(default_factory=dict)  # cells.po: printed tables' words (Chinese)
    sources: dict[str, nbformat.NotebookNode] = field(default_factory=dict)


COMPANION = re.compile(r"^\d+[a-z]$")  # 7b: a chapter's companion, numbered by its file name


def chapter_numbers() -> dict[str, str]:
    """page -> its number, from the numbered part of ``_toc.yml`` (a section of chapter 3: ``3.?``, numbered
    after the chapter's own sections; a companion chapter listed among chapter 7's sections: ``7b``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    numbers: dict[str, str] = {}
    count = 0
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for chapter in part.get("chapters", []):
            count += 1
            numbers[chapter["file"]] = str(count)
            # a chapter's own sections come after its headings: numbered once the chapter is read;
            # a companion chapter (07b) keeps the number its file name gives it (book/_ext/chapter_numbers.py)
            for section in chapter.get("sections", []):
                label = chapter_label(Path(section["file"]).name)
                numbers[section["file"]] = label if COMPANION.match(label) else f"{count}.?"
    return numbers


@functools.lru_cache(maxsize=64)
def source_of(page: str, language: str) -> nbformat.NotebookNode | str | None:
    """The notebook (or the Markdown text) of a page, in one edition's language (shared: never change it)."""
    notebook = ROOT / f"{page}.ipynb"
    if notebook.is_file():
        return read(notebook) if language == "en" else chinese_notebook(notebook, undecorated(translations(page)))
    markdown = ROOT / f"{page}.md"
    return markdown.read_text(encoding="utf-8") if markdown.is_file() else None


DECORATED = [
    # sphinx-proof puts a directive's title in parentheses and starts a proof with "Proof.";
    # Sphinx's messages are those decorated texts, the notebook's markdown has them bare
    (re.compile(r"^\((?P<text>.+)\)$", re.S), re.compile(r"^[（(](?P<text>.+)[)）]$", re.S)),
    (re.compile(r"^Proof\.\s+(?P<text>.+)$", re.S), re.compile(r"^证明[。：:.]\s*(?P<text>.+)$", re.S)),
]


def undecorated(table: dict[str, str]) -> dict[str, str]:
    """The catalog of a page, plus each decorated message as the markdown writes it."""
    extra = {}
    for message, translation in table.items():
        for english, chinese in DECORATED:
            source, target = english.match(message), chinese.match(translation)
            if source and target and source.group("text") not in table:
                extra[source.group("text")] = target.group("text")
    return {**table, **extra}


class Numbering:
    """Sphinx's numbers (``numfig``, a numbered toc): per chapter and kind, in reading order."""

    def __init__(self) -> None:
        self.counters: dict[tuple[str, str], int] = {}

    def next(self, chapter: str | None, kind: str) -> str | None:
        if chapter is None:
            return None
        self.counters[chapter, kind] = self.counters.get((chapter, kind), 0) + 1
        return f"{chapter}.{self.counters[chapter, kind]}"


def collect(language: str) -> Book:
    """Every target of the book, numbered as the site numbers it."""
    numbers = chapter_numbers()
    book = Book(language, bibliography(language))
    if language != "en":
        book.cell_messages = translations("cells")
    numbering = Numbering()
    for page in toc_files():
        source = source_of(page, language)
        if source is None:
            continue
        if not isinstance(source, str):
            book.sources[page] = source
            book.glue[page] = {g.name: g.text or "" for g in glued_outputs(source)}
            book.glue_figures[page] = {g.name for g in glued_outputs(source) if g.is_figure}
            book.figure_pngs.update(glued_pngs(source))
        number = numbers.get(page)
        if number and number.endswith(".?"):  # a section of a chapter: the chapter's next section
            number = numbering.next(number[:-2], "section")
        if number:
            book.chapters[page] = number
        page_number = PageNumbers(page, number, book, numbering)
        cells = [(0, source)] if isinstance(source, str) else list(enumerate(source.cells))
        for index, cell in cells:
            if isinstance(cell, str):
                page_number.markdown(index, cell)
            elif "remove-cell" in tags(cell):
                continue
            elif cell.cell_type == "markdown":
                page_number.markdown(index, cell.source)
            elif cell.cell_type == "code":
                page_number.figure(index, cell)
        if number and "." not in number:  # its sections (07b of 07) continue after its own
            numbering.counters[number, "section"] = page_number.sections[0] if page_number.sections else 0
    return book


def glued_pngs(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """Every figure a notebook glues: its name and its PNG (base64, as the output stores it)."""
    found = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            png = output.get("data", {}).get(GLUE_PREFIX + "image/png")
            if name and png:
                found[name] = "".join(png) if isinstance(png, list) else png
    return found


@dataclass
class PageNumbers:
    """The targets of one page, and the numbers of its headings and directives, cell by cell."""

    page: str
    number: str | None  # the page's own number ("3", "7b"); None outside the numbered part
    book: Book
    numbering: Numbering
    sections: list[int] = field(default_factory=list)  # the running section number below the page's
    pending: list[str] = field(default_factory=list)  # labels waiting for what they label

    @property
    def chapter(self) -> str | None:
        return self.number.split(".")[0] if self.number else None

    def resolve(self, kind: str = "other", number: str | None = None, title: str = "") -> None:
        for label in self.pending:
            self.book.targets[label] = Target(self.page, label, kind, number, title)
        self.pending.clear()

    def figure(self, index: int, cell: nbformat.NotebookNode) -> None:
        figure = cell.metadata.get("mystnb", {}).get("figure", {})
        if figure.get("name") and "remove-output" not in tags(cell):
            number = self.numbering.next(self.chapter, "figure")
            self.book.targets[figure["name"]] = Target(self.page, figure["name"], "figure", number, "")
            if number:
                self.book.figures[self.page, index] = number

    def heading(self, level: int, title: str) -> str | None:
        self.book.titles.setdefault(self.page, title)
        number = None
        if self.number and level == 1:
            self.sections, number = [], self.number
        elif self.number:
            self.sections = (self.sections + [0] * level)[: level - 1]
            self.sections[-1] += 1
            number = ".".join([self.number, *map(str, self.sections)])
        self.resolve("section", number, title)
        return number

    def markdown(self, index: int, text: str) -> None:
        headings: list[str | None] = []
        directives: list[str | None] = []
        for block in parse(text):
            if isinstance(block, Label):
                self.pending.append(block.label)
            elif isinstance(block, Text):
                for line in block.lines:
                    heading = HEADING.match(line)
                    if heading:
                        headings.append(self.heading(len(heading.group("hashes")), heading.group("title").strip()))
                    elif line.strip():
                        self.resolve()
            else:
                self.resolve()
                directives += number_block(block, self.page, self.chapter, self.book, self.numbering)
        self.resolve()
        if headings:
            self.book.headings[self.page, index] = headings
        if directives:
            self.book.directives[self.page, index] = directives


def number_block(block: Block, page: str, chapter: str | None, book: Book, numbering: Numbering) -> list[str | None]:
    """Register the targets in one block; the numbers of its directives, in document order."""
    found: list[str | None] = []
    for inner in walk([block]):
        if isinstance(inner, Math) and inner.label:
            eq_number = numbering.next(chapter, "equation")
            book.targets[inner.label] = Target(page, f"equation-{inner.label}", "equation", eq_number, "")
            if eq_number:
                book.equations[page, inner.label] = eq_number
        elif isinstance(inner, Directive):
            kind = inner.name
            numbered = kind == "exercise" or (kind.startswith("prf:") and kind != "prf:proof")
            if kind in FIGURES and inner.options.get("name"):
                numbered, kind = True, "figure"
            the_number = numbering.next(chapter, kind) if numbered and "nonumber" not in inner.options else None
            label = inner.options.get("label") or inner.options.get("name")
            if label:
                book.targets[label] = Target(page, label, kind, the_number, inner.argument.strip())
            found.append(the_number)
    return found


@functools.cache
def bibliography(language: str = "en") -> dict[str, str]:
    """bibtex key -> the author-year label the site shows (sphinxcontrib-bibtex's ``author_year``
    style; in the Chinese edition joined as ``book/_ext/zh_edition.py`` joins them: 「Kingma 和 Ba，
    2015」, 「Liu 等，2022」)."""
    both, others = (ZH_AUTHOR_AND, ZH_ET_AL) if language == "zh_CN" else (" and ", " et al.")
    from pybtex.database import parse_file

    entries = {}
    for name in config().get("bibtex_bibfiles", []):
        data = parse_file(str(ROOT / name), bib_format="bibtex")
        for key, entry in data.entries.items():
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            names = [" ".join(person.prelast_names + person.last_names) for person in people]
            names = [_strip_braces(n) for n in names]
            if not names:
                who = _strip_braces(entry.fields.get("organization", entry.fields.get("title", key)))
            elif len(names) == 1:
                who = names[0]
            elif len(names) == 2 and not (language == "zh_CN" and names[1] == "others"):
                who = f"{names[0]}{both}{names[1]}"  # bibtex's "and others" reads "Liu and others" in English
            else:
                who = f"{names[0]}{others}"
            year_sep = ZH_YEAR_SEP if language == "zh_CN" else ", "
            entries[key] = f"{who}{year_sep}{entry.fields.get('year', 'n.d.')}"
    return entries


def _strip_braces(text: str) -> str:
    return text.replace("{", "").replace("}", "").replace("\\", "")


# ---------------------------------------------------------------------------------------------
# Inline: roles, with code spans left alone


ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<content>[^`]*)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>\s*$", re.S)


@dataclass
class Context:
    book: Book
    edition: Edition
    page: str
    unknown: list[str]
    numbers: list[str | None] = field(default_factory=list)  # the current cell's directive numbers, in order

    @property
    def site(self) -> str:
        return site_url(self.edition.language)

    def url(self, page: str, anchor: str | None = None) -> str:
        return f"{self.site}{page}.html" + (f"#{anchor}" if anchor else "")

    def word(self, key: str) -> str:
        return self.edition.words[key]

    def zh(self) -> bool:
        return self.edition.language != "en"


def inline(text: str, ctx: Context) -> str:
    """Rewrite the roles of one run of text; code spans stay as they are."""
    out: list[str] = []
    i = 0
    while i < len(text):
        role = ROLE.match(text, i)
        if role:
            out.append(render_role(role.group("name"), role.group("content"), ctx))
            i = role.end()
            continue
        if text[i] == "`":
            run = re.match(r"`+", text[i:])
            assert run
            ticks = run.group(0)
            end = text.find(ticks, i + len(ticks))
            if end != -1 and (end + len(ticks) >= len(text) or text[end + len(ticks)] != "`"):
                out.append(text[i : end + len(ticks)])
                i = end + len(ticks)
                continue
            out.append(ticks)
            i += len(ticks)
            continue
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def split_explicit(content: str) -> tuple[str | None, str]:
    match = EXPLICIT.match(content)
    if match and match.group("text"):
        return match.group("text"), match.group("target")
    return None, content.strip()


def glue_value(content: str, ctx: Context, any_role: bool = False) -> str:
    """The text a glue role pastes, parsed and formatted as myst-nb does (``key:fmt``, ``../x.ipynb::key:fmt``)."""
    from myst_nb.core.variables import format_plain_text

    if any_role:  # {glue}`key`: no format
        key, spec = content, ""
    else:  # myst_nb.ext.glue.roles.PasteTextRole: the format is whatever follows the last colon
        key, spec = (content.rsplit(":", 1) + ["s"])[:2] if ":" in content else (content, "s")
    page = ctx.page
    if "::" in key:
        path, key = key.split("::", 1)
        page = str((ROOT / Path(ctx.page).parent / path).resolve().relative_to(ROOT).with_suffix(""))
    values = ctx.book.glue.get(page, {})
    if key not in values:
        raise KeyError(f"{ctx.page}: no glued value {key!r} in {page}")
    if key in ctx.book.glue_figures.get(page, set()):
        raise ValueError(f"{ctx.page}: {key!r} is a figure; an inline role cannot paste it")
    return format_plain_text(values[key], spec) if spec else format_plain_text(values[key], "")


def render_role(name: str, content: str, ctx: Context) -> str:
    if name in ("glue", "glue:any"):
        return f"{glue_value(content, ctx, any_role=True)}{MARK}"
    if name == "glue:text":
        return f"{glue_value(content, ctx)}{MARK}"
    if name == "math":
        return f"${content}$"
    if name in ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts", "footcite"):
        links = []
        for key in (k.strip() for k in content.split(",")):
            label = ctx.book.bibliography.get(key)
            if label is None:
                raise KeyError(f"{ctx.page}: no bibliography entry {key!r}")
            links.append(f"[{label}]({ctx.url('book/bibliography')})")
        return "[" + (ZH_CITATION_SEP if ctx.zh() else ", ").join(links) + "]"
    text, target = split_explicit(content)
    if name == "term":
        anchor = "term-" + re.sub(r"[^\w]+", "-", target.lower()).strip("-")
        return f"[{text or target}]({ctx.url('book/glossary', anchor)})"
    if name == "doc":
        page = str((ROOT / Path(ctx.page).parent / target).resolve().relative_to(ROOT))
        page = page.removesuffix(".ipynb").removesuffix(".md")
        title = text or page_title(page, ctx)
        return f"[{title}]({ctx.url(page)})"
    if name in ("ref", "numref", "eq", "prf:ref", "any"):
        found = ctx.book.targets.get(target)
        if found is None:
            raise KeyError(f"{ctx.page}: no target {target!r} for {{{name}}}")
        shown = reference_text(name, text, found, ctx)
        return f"[{shown}]({ctx.url(found.page, found.anchor)})"
    if name == "download":
        return f"[{text or Path(target).name}]({download_url(target, ctx)})"
    ctx.unknown.append(f"role {{{name}}}")
    return text or content


def download_url(target: str, ctx: Context) -> str:
    """Where the site serves a file that a page offers with {download}: Sphinx copies it to
    ``_downloads/<md5 of its path from the source folder>/<its name>``. In the Chinese edition a glued
    figure is offered as its Chinese copy where there is one (as book/_ext/zh_edition.py does)."""
    path = (ROOT / Path(ctx.page).parent / target).resolve()
    if ctx.zh() and path.parent == ROOT / "book" / "_generated":
        chinese = path.with_name(chinese_copy(path.stem) + path.suffix)
        path = chinese if chinese.is_file() else path
    source = path.relative_to(ROOT).as_posix()
    return f"{ctx.site}_downloads/{hashlib.md5(source.encode(), usedforsecurity=False).hexdigest()}/{path.name}"


def reference_text(role: str, text: str | None, target: Target, ctx: Context) -> str:
    """The link text the site shows for a reference."""
    caption = {
        "figure": ctx.word("fig"),
        "exercise": ctx.word("exercise"),
        "section": "§",
    }
    if target.kind.startswith("prf:"):
        caption[target.kind] = directive_title(target.kind, ctx)
    if role == "eq":
        return f"({target.number})" if target.number else (text or target.anchor)
    if role == "numref":
        number = target.number or "?"
        if text:
            return text.replace("%s", number).replace("{number}", number).replace("{name}", target.title)
        prefix = caption.get(target.kind, "")
        return f"{prefix} {number}".strip() if prefix != "§" else f"§{number}"
    if text:
        return text
    if target.kind == "section":
        return target.title
    if target.kind == "exercise" or target.kind.startswith("prf:"):
        return f"{caption[target.kind]} {target.number}" if target.number else target.title
    if target.kind == "figure":
        return f"{caption['figure']} {target.number}" if target.number else target.anchor
    if target.kind == "equation":
        return f"({target.number})"
    return target.title or target.anchor


def page_title(page: str, ctx: Context) -> str:
    return ctx.book.titles.get(page, page)


# ---------------------------------------------------------------------------------------------
# Blocks: to plain Markdown


def quote(lines: list[str]) -> list[str]:
    return [f"> {line}" if line.strip() else ">" for line in lines]


def details(summary: str, body: list[str]) -> list[str]:
    return [f"<details><summary>{summary_html(summary)}</summary>", "", *body, "", "</details>"]


def summary_html(text: str) -> str:
    """A summary is HTML: its code spans and emphasis must be HTML too (math stays for MathJax)."""
    text = re.sub(r"`([^`]+)`", lambda m: f"<code>{_escape(m.group(1))}</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?!\w)", r"<em>\1</em>", text)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(blocks: list[Block], ctx: Context, headings: list[str | None] | None = None) -> list[str]:
    """Blocks as plain Markdown lines; ``headings``: the site's numbers of their headings, in order."""
    out: list[str] = []
    headings = list(headings or [])
    for block in blocks:
        if isinstance(block, Label):
            continue
        if isinstance(block, Code):
            out += block.lines
        elif isinstance(block, Math):
            out += render_math(block, ctx)
        elif isinstance(block, Text):
            for line in block.lines:
                if COMMENT_LINE.match(line) or BLOCK_BREAK.match(line):
                    continue
                heading = HEADING.match(line)
                if heading and headings:
                    number = headings.pop(0)
                    if number:
                        line = f"{heading.group('hashes')} {number}. {heading.group('title')}"
                out.append(inline(line, ctx))
        else:
            # a blank line on each side: after an HTML block or a quote, text would otherwise continue it
            rendered = [indent(line, block.indent) for line in render_directive(block, ctx)]
            out += ["", *rendered, ""]
    return _squeeze(out)


def indent(line: str, prefix: str) -> str:
    return line if not line or line.startswith(prefix) else prefix + line


def _squeeze(lines: list[str]) -> list[str]:
    """No runs of blank lines, none at either end."""
    out: list[str] = []
    for line in lines:
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def render_math(block: Math, ctx: Context) -> list[str]:
    """Display math as it is; one the site numbers gets its number as a ``\\tag``."""
    lines = [line for line in block.lines if line.strip()]  # a blank line ends a paragraph, math or not
    number = ctx.book.equations.get((ctx.page, block.label)) if block.label else None
    if number:
        tag = f"\\tag{{{number}}}"
        before = lines[-1].rstrip()[:-2]
        if before.strip():
            lines[-1] = f"{before.rstrip()} {tag} $$"
        else:
            lines[-1:] = [before + tag, before + "$$"]
    return lines


def render_directive(block: Directive, ctx: Context) -> list[str]:
    number = (ctx.numbers.pop(0) if ctx.numbers else None) or ""  # before the body's own directives
    name, argument = block.name, inline(block.argument.strip(), ctx)
    inner = [b for b in block.body if not (isinstance(b, Text) and not "".join(b.lines).strip())]
    if name == "dropdown" and len(inner) == 1 and isinstance(inner[0], Directive) and inner[0].name == "prf:proof":
        ctx.numbers.pop(0) if ctx.numbers else None  # a folded proof: one title, "Proof", not two
        return details(argument or ctx.word("proof"), [*render(inner[0].body, ctx), "", "∎"])
    body = render(block.body, ctx)
    classes = block.options.get("class", "").split()
    folded = "dropdown" in classes
    if name == "admonition" or (name in DIRECTIVE_TITLES and not name.startswith("prf:")):
        title = argument or directive_title(name, ctx)
        return details(title, body) if folded else quote([f"**{title}**", "", *body])
    if name == "dropdown":
        return details(argument or ctx.word("details"), body)
    if name == "exercise":
        title = f"{ctx.word('exercise')} {number}".strip()
        return [f"**{ctx.word('titled').format(title, argument) if argument else title}**", "", *body]
    if name == "solution":
        target = ctx.book.targets.get(block.argument.strip())
        if target is None:
            ctx.unknown.append(f"solution to an unknown exercise {block.argument.strip()!r}")
            return details(ctx.word("solution").format(ctx.word("exercise")), body)
        exercise = reference_text("ref", None, target, ctx)
        if target.title:
            exercise = ctx.word("titled").format(exercise, inline(target.title, ctx))
        return details(ctx.word("solution").format(exercise), body)
    if name == "prf:proof":
        if folded:
            return details(ctx.word("proof"), body)
        return [ctx.word("proof_start"), "", *body, "", "∎"]
    if name.startswith("prf:"):
        title = f"{directive_title(name, ctx)} {number}".strip()
        title = ctx.word("titled").format(title, argument) if argument else title
        return details(title, body) if folded else quote([f"**{title}**", "", *body])
    if name in ("code-cell", "code-block", "code", "sourcecode"):
        return ["```" + (block.argument.strip() or "python"), *_raw_body(block), "```"]
    if name == "math":
        return ["$$", *_raw_body(block), "$$"]
    if name in ("figure", "image"):
        alt = block.options.get("alt", "")
        image = f"![{alt}]({ctx.site}_images/{Path(block.argument.strip()).name})"
        return [image, "", *(_caption(number, body, ctx) if name == "figure" else [])]
    if name == "glue:figure":
        return _caption(number, body, ctx) or [f"*{ctx.word('fig')} {number}*"]
    if name == "scale-explorer":  # the site's interactive explorer: its body is its static stand-in
        anchor = block.options.get("name")
        link = f"[{ctx.word('interactive_link')}]({ctx.url(ctx.page, anchor)})"
        return [f"*{ctx.word('interactive').format(link)}*", "", *body]
    ctx.unknown.append(f"directive {{{name}}}")
    return quote([f"**{argument or name}**", "", *body])


def _raw_body(block: Directive) -> list[str]:
    lines: list[str] = []
    for inner in block.body:
        if isinstance(inner, (Text, Code, Math)):
            lines += inner.lines
    return _squeeze(lines)


def _caption(number: str, caption: list[str], ctx: Context) -> list[str]:
    if not caption:
        return []
    first = f"**{ctx.word('fig')} {number}.** " if number and not ctx.zh() else f"**{ctx.word('fig')} {number}** "
    return [first + caption[0], *caption[1:]]


# ---------------------------------------------------------------------------------------------
# One notebook


def markdown_cell(source: str, cell_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(source)
    cell.id = cell_id
    return cell


def learner_outputs(cell: nbformat.NotebookNode, book: Book, ctx: Context) -> list[nbformat.NotebookNode]:
    """A code cell's committed outputs as a learner sees them: without glue records; in Chinese, its
    figure the Chinese copy and its printed tables translated (as the Chinese pages show them)."""
    outputs = []
    for output in cell.get("outputs", []):
        if "data" in output:
            output.data = {key: value for key, value in output.data.items() if not key.startswith(GLUE_PREFIX)}
            if not output.data:
                continue  # a glue record: JupyterLab, Colab and GitHub show nothing of it
            output.metadata = {key: value for key, value in output.get("metadata", {}).items() if key != "scrapbook"}
        if output.output_type == "execute_result":
            output.execution_count = None
        outputs.append(output)
    if not ctx.zh():
        return outputs
    images = [output for output in outputs if "image/png" in output.get("data", {})]
    name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name", "").replace("-", "_")
    chinese = book.figure_pngs.get(f"{name}_zh") if name else None
    if chinese is not None and len(images) == 1:  # book/_ext/zh_edition.py, ChineseFigures
        images[0].data["image/png"] = chinese
    for output in outputs:
        table = output.get("data", {}).get("text/html")
        if table is not None and is_book_table("".join(table)):
            output.data["text/html"] = translate_table("".join(table), book.cell_messages)
        if is_printed(output):  # what the cell printed, in the book's words: as the Chinese pages show it
            output.text = translate_printed("".join(output.text), book.cell_messages)
    return outputs


def learner_notebook(page: str, book: Book, edition: Edition, unknown: list[str]) -> nbformat.NotebookNode:
    source = book.sources[page]
    ctx = Context(book, edition, page, unknown)
    notebook = copy.deepcopy(source)
    cells = []
    chapter = book.chapters.get(page, "")
    note = edition.words["note"].format(number=chapter, book=book_title(edition.language), url=ctx.url(page))
    noted = False
    for index, cell in enumerate(notebook.cells):
        if "remove-cell" in tags(cell):
            continue  # on the site nowhere; in code, a build-only cell (slides, Chinese copies of figures)
        if cell.cell_type == "markdown":
            ctx.numbers = list(book.directives.get((page, index), []))
            lines = render(parse(cell.source), ctx, book.headings.get((page, index)))
            if not noted:
                heading = next((i for i, line in enumerate(lines) if HEADING.match(line)), None)
                at = heading + 1 if heading is not None else 0
                lines[at:at] = ["", note, ""]
                noted = True
            cells.append(_markdown(cell, "\n".join(_squeeze(lines))))
            continue
        if cell.cell_type != "code" or is_build_only(cell):  # book production: not the learner's to run
            if cell.cell_type != "code":
                cells.append(cell)
            continue
        if not any(c.cell_type == "code" for c in cells):
            cells.append(setup_cell(edition.language))
        cell.outputs = learner_outputs(cell, book, ctx)
        cell.execution_count = None
        cell.metadata = {key: value for key, value in cell.metadata.items() if key == "tags"}
        cells.append(cell)
        figure = source.cells[index].metadata.get("mystnb", {}).get("figure", {})
        if figure.get("caption") and (page, index) in book.figures:
            ctx.numbers = []
            caption = render(parse(figure["caption"]), ctx)
            text = "\n".join(_caption(book.figures[page, index], caption, ctx))
            cells.append(markdown_cell(text, f"{cell.get('id', index)}-caption"))
    notebook.cells = cells
    metadata = {key: notebook.metadata[key] for key in ("kernelspec", "language_info") if key in notebook.metadata}
    metadata["book"] = {"edition": "learner", "language": edition.language, "page": page}
    notebook.metadata = metadata
    return notebook


def _markdown(cell: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    new = copy.deepcopy(cell)
    new.source, new.metadata = source, {}
    return new


# ---------------------------------------------------------------------------------------------
# The whole edition


def build(language: str) -> tuple[dict[str, nbformat.NotebookNode], list[str]]:
    """Every learner notebook of one edition (by file name), and what was rendered generically."""
    edition = editions()[language]
    book = collect(language)
    unknown: list[str] = []
    notebooks = {}
    for path in chapter_notebooks():
        page = str(path.relative_to(ROOT).with_suffix(""))
        notebooks[path.name] = learner_notebook(page, book, edition, unknown)
    return notebooks, sorted(set(unknown))


def write(folder: Path, languages: tuple[str, ...] = LANGUAGES) -> list[Path]:
    """Write ``folder/<language>/<chapter>.ipynb`` for every chapter; return the files written."""
    written = []
    for language in languages:
        notebooks, unknown = build(language)
        for item in unknown:
            print(f"learner ({language}): rendered generically: {item}", file=sys.stderr)
        target = folder / language
        target.mkdir(parents=True, exist_ok=True)
        for name, notebook in notebooks.items():
            (target / name).write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
            written.append(target / name)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="where to write <language>/<chapter>.ipynb")
    parser.add_argument("--language", choices=LANGUAGES, help="only this edition")
    args = parser.parse_args()
    written = write(args.folder, (args.language,) if args.language else LANGUAGES)
    print(f"learner: {len(written)} notebooks in {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
