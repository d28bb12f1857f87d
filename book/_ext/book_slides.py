"""Lecture slides, rendered by the book's own build.

Every chapter becomes a reveal.js deck in ``_build/html/slides/``, and the cells
tagged ``lecture`` across all chapters become one 90-minute lecture deck
(``slides/lecture.html``), with speaker notes from the cells' ``notes`` metadata.

Nothing here parses MyST. While Sphinx reads a notebook, myst-nb turns each
cell into doctree nodes; this extension only leaves an invisible marker (a
comment node, which every writer drops) at the start of each markdown cell, so
that after Sphinx has resolved every role, directive, glued value, citation and
cross-reference, the nodes of each cell can be found again and rendered to HTML
by Sphinx's own HTML writer (``builder.render_partial``). Which cells become
slides follows the cells' metadata: a code cell whose code the page folds (``hide-input``)
shows its output (a figure, a table), never its code; checks and glue (``is_plumbing``),
folded deep dives (``hide-cell``), removed cells, solutions and dropdowns never show, nor does
a dropdown or solution inside a slide's block (a verdict box shows its grade and bottom line);
a markdown cell whose ``slideshow.slide_type`` is ``-`` continues the previous slide. A slide
that opens without a heading repeats its section's, so every slide has a title.

The 90-minute lecture is not cut from cells: ``book/lecture.yml`` writes each of its slides
(a title, at most about 40 words for the talk, the cell whose figure, table or code it shows,
and the speaker notes); see ``lecture_slide``.

Slides taller than the 1280 × 720 slide are split in the browser, before
reveal.js starts, at block boundaries (``slides/deck.js``); the browser tests
check that no slide overflows after that.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from docutils import nodes
from docutils.parsers.rst import Directive
from jinja2 import Template
from sphinx.errors import ExtensionError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from site_tweaks import plain_title  # noqa: E402  (book/_ext is on the path: Sphinx loads us from there)
from wide_figures import wide_only  # noqa: E402

from tools.notebook_format import (  # noqa: E402
    ROOT,
    GlueRole,
    chapter_notebooks,
    chinese_copy,
    glued_outputs,
    is_plumbing,
    paste_glue_roles,
    read,
    tags,
)
from tools.upstream import require  # noqa: E402

HERE = Path(__file__).resolve().parent / "slides"
REVEAL = ROOT / "book" / "_vendor_slides" / "reveal.js"
# What the decks load (slides/deck.html.j2), nothing more: reveal.js's other themes import web
# fonts from the network, and the notes plugin bundles its own speaker view.
REVEAL_PARTS = (
    "LICENSE",
    "dist/reveal.css",
    "dist/reveal.js",
    "dist/theme/white.css",
    "dist/theme/fonts/source-sans-pro",
    "plugin/notes/notes.js",
)
MARKER = "nb-cell-marker"
NEVER_ON_SLIDES = {"hide-cell", "remove-cell", "hide-output"}
# a cell whose code the page folds or removes: its output (a figure, a table) is on the slide, its code never
OUTPUT_ONLY = {"hide-input", "remove-input"}


# --- 1. A marker at the start of every markdown cell ---------------------------------------


def _install_cell_markers() -> None:
    """Wrap myst-nb's renderer of a markdown cell so that it first leaves the marker.

    myst-nb cannot wrap a markdown cell in a container node (its headings open sections that
    must stay at the top of the doctree: MyST-NB issue 227), and its renderer says so in a TODO
    that proposes this very marker.
    """
    require(
        "myst-nb",
        "1.4.0",
        "book_slides.py (a marker node at the start of every markdown cell)",
        "MditRenderMixin.render_nb_cell_markdown, "
        "https://github.com/executablebooks/MyST-NB/blob/v1.4.0/myst_nb/core/render.py#L113-L119 "
        "(and https://github.com/executablebooks/MyST-NB/issues/227)",
    )
    from myst_nb.core.render import MditRenderMixin

    original = MditRenderMixin.render_nb_cell_markdown
    if getattr(original, "_book_marker", False):
        return

    def render_nb_cell_markdown(self, token):
        self.current_node.append(nodes.comment("", "", classes=[MARKER], cell_index=token.meta["index"]))
        original(self, token)

    render_nb_cell_markdown._book_marker = True
    MditRenderMixin.render_nb_cell_markdown = render_nb_cell_markdown


# --- 2. The blocks of each cell, from the resolved doctree ---------------------------------


@dataclass
class Block:
    cell: int
    kind: str  # "title" (a section heading, with its level), "code" or "body"
    node: nodes.Node
    level: int = 0


def cell_blocks(doctree: nodes.document) -> list[Block]:
    blocks: list[Block] = []
    current = -1

    def walk(parent: nodes.Element, level: int) -> None:
        nonlocal current
        for child in parent.children:
            if isinstance(child, nodes.comment) and MARKER in child.get("classes", []):
                current = child["cell_index"]
            elif isinstance(child, nodes.section):
                walk(child, level + 1)
            elif isinstance(child, nodes.title):
                blocks.append(Block(current, "title", child, level))
            elif isinstance(child, nodes.container) and child.get("nb_element") == "cell_code":
                blocks.append(Block(child["cell_index"], "code", child))
            elif isinstance(child, (nodes.target, nodes.comment, nodes.substitution_definition)) or _never_on_slides(
                child
            ):
                continue
            else:
                blocks.append(Block(current, "body", child))

    walk(doctree, 0)
    return blocks


def _never_on_slides(node: nodes.Node) -> bool:
    """Solutions, dropdowns (folded deep dives) and hidden content stay in the book."""
    name = type(node).__name__
    classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
    return "solution" in name or name.startswith("dropdown") or "dropdown" in classes or "toggle" in classes


def without_book_only(node: nodes.Node) -> nodes.Node:
    """``node`` (a copy) without what stays in the book wherever it sits: a verdict box keeps
    its grade and its bottom line, not its dropdown of quote, scope and parts; an exercise
    keeps its task, not a nested solution."""
    if isinstance(node, nodes.Element):
        for inner in list(node.findall(include_self=False)):
            if _never_on_slides(inner) and inner.parent is not None:
                inner.parent.remove(inner)
    return node


# --- 3. Rendering ----------------------------------------------------------------------------


def render(builder, node: nodes.Node, page: str) -> str:
    """HTML for one node, written by the same translator that writes the page.

    (``builder.render_partial`` would run docutils' writer transforms, which the
    page's own writing does not, and which fail on sphinx-exercise's nodes.)
    """
    document = node.document
    translator = builder.create_translator(document, builder)
    holder = nodes.Element()  # a parent for the copy: some visitors look at node.parent
    holder.document = document
    holder.append(without_book_only(node.deepcopy()))  # docutils deepcopy: the subtree, not its parents
    holder.children[0].walkabout(translator)
    fragment = "".join(translator.body)
    # reveal.js reads a <section> inside a slide as a vertical sub-slide (sphinx-proof writes one
    # around a theorem's body): on a slide it is a plain block
    fragment = re.sub(r"<(/?)section\b", r"<\1div", fragment)
    fragment = wide_only(fragment)  # a slide shows a multi-panel figure side by side, never stacked
    # in-page links point into the chapter's page, not into the deck
    return re.sub(r'href="#', f'href="../{page}.html#', fragment)


def render_title(builder, block: Block, page: str) -> str:
    paragraph = nodes.paragraph("", "", *[c.deepcopy() for c in block.node.children])
    paragraph.document = block.node.document
    paragraph.parent = block.node.parent
    inner = render(builder, paragraph, page).strip()
    inner = re.sub(r"^<p>|</p>$", "", inner)
    tag = "h1" if block.level <= 1 else "h2" if block.level == 2 else "h3"
    return f"<{tag}>{inner}</{tag}>"


def render_code(builder, block: Block, page: str, with_input: bool = True, with_output: bool = True) -> list[str]:
    """A code cell as two blocks, its input and its output, so a tall pair can split."""
    parts = []
    wanted = (("cell_code_source",) if with_input else ()) + (("cell_code_output",) if with_output else ())
    for child in block.node.children:
        if child.get("nb_element") in wanted:
            parts.append(f'<div class="cell {child.get("nb_element")}">{render(builder, child, page)}</div>')
    return parts


@dataclass
class Slide:
    cell: int
    blocks: list[str] = field(default_factory=list)
    notes: str = ""
    lecture: bool = False
    # the lecture's slide for this cell (book/lecture.yml), written for the talk: see lecture_slide
    lecture_blocks: list[str] = field(default_factory=list)
    # the notebook cell and its figures, for the decks' tests (tests/test_slides.py)
    source: str = ""


def chapter_slides(builder, page: str, doctree: nodes.document) -> tuple[str, list[Slide]]:
    notebook = read(ROOT / f"{page}.ipynb")
    stem = page.split("/")[-1]
    selection = {entry["cell"]: entry for entry in lecture_selection(builder.config.language).get(stem, [])}
    by_cell: dict[int, list[Block]] = {}
    title = ""
    for block in cell_blocks(doctree):
        if block.kind == "title" and block.level <= 1 and not title:
            title = render_title(builder, block, page)
        by_cell.setdefault(block.cell, []).append(block)
    slides: list[Slide] = []
    # the heading of the section we are in, first the chapter's: a slide that opens without one repeats it
    section = re.sub(r"(?s)^<h1>(.*)</h1>$", r"<h2>\1</h2>", title)
    for index, cell in enumerate(notebook.cells):
        slide_type = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        cell_tags = set(tags(cell))
        if index not in by_cell or slide_type in ("skip", "notes") or cell_tags & NEVER_ON_SLIDES:
            continue
        if cell.cell_type == "code" and (is_plumbing(cell.source) or "use_book_style()" in cell.source):
            continue  # checks and the standard setup cell stay in the book
        with_input = not cell_tags & OUTPUT_ONLY
        code = [render_code(builder, b, page, with_input) for b in by_cell[index] if b.kind == "code"]
        if cell.cell_type == "code" and not any(code):
            continue  # folded code with nothing to show (a function's definition)
        chosen = selection.get(cell.get("id"))
        lecture = chosen is not None
        notes = notes_text(builder.env, chosen["notes"]) if chosen else ""
        opens = not slides or slide_type in ("slide", "subslide") or lecture
        opened, carried = None, section  # the slide this cell opens, and the title it carries if it has none
        if opens:
            slides.append(Slide(index, notes=notes, lecture=lecture, source=f"{stem}:{cell.get('id')}"))
            opened = slides[-1]
            if lecture:
                slides[-1].lecture_blocks = lecture_slide(builder, page, chosen, by_cell[index], with_input)
        elif notes:
            slides[-1].notes += " " + notes
        for block in by_cell[index]:
            if block.kind == "title" and block.level <= 1:
                continue  # the chapter's title has a slide of its own
            if block.kind == "title":
                if slides[-1].blocks and block.level >= 2:
                    slides.append(Slide(index, notes=notes, source=f"{stem}:{cell.get('id')}"))
                section = render_title(builder, block, page)
                slides[-1].blocks.append(section)
            elif block.kind == "code":
                slides[-1].blocks.extend(code.pop(0))
            else:
                slides[-1].blocks.append(render(builder, block.node, page))
        if opened is not None and carried and not HEADING.match(opened.blocks[0] if opened.blocks else ""):
            opened.blocks.insert(0, re.sub(r"^<h([1-3])>", r'<h\1 class="carried">', carried))
    return title, [s for s in slides if "".join(s.blocks).strip()]


HEADING = re.compile(r"\s*<h[1-3]\b")
FIGCAPTION = re.compile(r"<figcaption>.*?</figcaption>", re.S)


def lecture_slide(builder, page: str, entry: dict, blocks: list[Block], with_input: bool) -> list[str]:
    """One slide of the lecture, as book/lecture.yml writes it: its title, its text for the talk,
    and what its cell shows: a code cell's output (its code too with ``code: true``; its code alone
    with ``output: false``, where the room guesses what it prints before the next slide), a figure
    without the book's caption (the title and text say what to look at; the alt text stays);
    a markdown cell shows its own content only where the entry writes no text."""
    parts = [f"<h2>{_markup(entry['title'])}</h2>"]
    text = entry.get("text")
    if isinstance(text, list):
        parts.append("<ul>" + "".join(f"<li>{_markup(t)}</li>" for t in text) + "</ul>")
    elif text:
        parts += [f"<p>{_markup(t)}</p>" for t in str(text).split("\n\n")]
    for block in blocks:
        if block.kind == "code":
            code = with_input and bool(entry.get("code"))
            shown = render_code(builder, block, page, with_input=code, with_output=entry.get("output", True))
            if code and entry.get("code_lines"):
                shown = [_code_lines(part, str(entry["code_lines"])) for part in shown]
            # a room reads the lecture's code at the deck's smallest text size (deck.css, .lecture-code)
            parts += [
                FIGCAPTION.sub("", part).replace('class="cell cell_code', 'class="lecture-code cell cell_code', 1)
                for part in shown
            ]
        elif block.kind == "body" and not text:
            parts.append(FIGCAPTION.sub("", render(builder, block.node, page)))
    return parts


PRE = re.compile(r"(<pre>(?:<span></span>)?)(.*?)(</pre>)", re.S)


def _code_lines(part: str, wanted: str) -> str:
    """A code cell's input block with only the lines ``wanted`` names (``"7-9, 11, 13-14"``, 1-based, as
    book/lecture.yml's ``code_lines`` writes them), a "⋮" line where lines are left out; its output as it is."""
    if "cell_code_source" not in part:
        return part
    keep: list[int] = []
    for piece in wanted.split(","):
        first, _, last = piece.strip().partition("-")
        keep += range(int(first), int(last or first) + 1)

    def cut(match: re.Match[str]) -> str:
        lines = match.group(2).rstrip("\n").split("\n")
        if max(keep) > len(lines):
            raise ExtensionError(f"code_lines {wanted!r}: the cell has {len(lines)} lines")
        shown, previous = [], 0
        for number in sorted(set(keep)):
            if number != previous + 1:
                shown.append('<span class="c1">⋮</span>')
            shown.append(lines[number - 1])
            previous = number
        if previous < len(lines):
            shown.append('<span class="c1">⋮</span>')
        return match.group(1) + "\n".join(shown) + "\n" + match.group(3)

    return PRE.sub(cut, part, count=1)


def _markup(text: str) -> str:
    """A lecture slide's title or text: plain text, with glued values pasted (as _text), ``$math$`` and
    ``$$math$$`` typeset by the deck's MathJax, ``**bold**``."""
    escaped = _text(" ".join(str(text).split()))
    escaped = re.sub(r"\$\$(.+?)\$\$", r'<span class="math notranslate nohighlight">\\[\1\\]</span>', escaped)
    escaped = re.sub(r"\$(.+?)\$", r'<span class="math notranslate nohighlight">\\(\1\\)</span>', escaped)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)


# --- 4. Decks ----------------------------------------------------------------------------------
# Each chapter's slides are kept as JSON beside the doctrees (a build's cache, never published),
# so that an incremental build, which writes only the pages that changed, still assembles the
# lecture from every chapter.


def slide_cache(app) -> Path:
    return Path(app.doctreedir) / "slides"


def collect(app, pagename, templatename, context, doctree):
    if app.builder.format != "html" or doctree is None or not pagename.startswith("notebooks/"):
        return
    title, slides = chapter_slides(app.builder, pagename, doctree)
    cache = slide_cache(app)
    cache.mkdir(parents=True, exist_ok=True)
    record = {"title": title, "slides": [dataclasses.asdict(s) for s in slides]}
    (cache / f"{pagename.split('/')[-1]}.json").write_text(json.dumps(record), encoding="utf-8")


def write_deck(path: Path, title: str, slides: list[tuple[str, str, str]], lang: str = "en") -> None:
    """``slides``: (HTML, speaker notes, the notebook cell it shows as ``stem:cell id``, or "")."""
    template = Template((HERE / "deck.html.j2").read_text(encoding="utf-8"))
    # the site's icon inline: a request the browser makes after the deck has loaded, which a test that
    # moves on to the next deck would see aborted
    icon = (ROOT / "book" / "_assets" / "favicon.svg").read_bytes()
    favicon = "data:image/svg+xml;base64," + base64.b64encode(icon).decode("ascii")
    # how far deck.js may shrink a figure drawn for a slide rather than split its slide: the scale down to
    # which its text stays >= 18 px in a 1280 x 720 window (tools/figures.py, which draws the figures for slides)
    from tools.figures import SLIDE_MIN_SCALE, SLIDE_VIEW_SCALE  # noqa: PLC0415

    min_scale = round(SLIDE_MIN_SCALE / SLIDE_VIEW_SCALE, 4)
    if lang.startswith("zh"):  # 「定理 3.1（……）」, as on the Chinese pages
        from zh_edition import CAPTION_NUMBER_SPACE  # noqa: PLC0415  (the Chinese build's extension)

        slides = [(CAPTION_NUMBER_SPACE.sub(r"\1</span>", body), notes, source) for body, notes, source in slides]
    path.write_text(
        template.render(title=title, slides=slides, lang=lang, favicon=favicon, figure_min_scale=min_scale),
        encoding="utf-8",
    )


def html_lang(app) -> str:
    """The decks' ``<html lang>``: the edition's language as the pages declare it (zh_CN: zh-CN)."""
    return (app.config.language or "en").replace("_", "-")


def write_decks(app, exception):
    out, cache = Path(app.outdir) / "slides", slide_cache(app)
    if exception is not None or app.builder.format != "html" or not cache.is_dir():
        return
    out.mkdir(exist_ok=True)
    for name in ("deck.css", "deck.js"):
        shutil.copy(HERE / name, out / name)
    for part in REVEAL_PARTS if REVEAL.is_dir() else ():
        source, target = REVEAL / part, out / "reveal.js" / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy(source, target)
    lecture: list[tuple[str, str]] = []
    order = [f"notebooks/{p.stem}" for p in chapter_notebooks()]
    for page in order:
        cached = cache / f"{page.split('/')[-1]}.json"
        if not cached.is_file():
            continue
        record = json.loads(cached.read_text(encoding="utf-8"))
        title, slides = record["title"], [Slide(**s) for s in record["slides"]]
        deck = [(title.replace("<h1>", '<h1 class="deck-title">'), "", "")]
        deck += [("\n".join(s.blocks), s.notes, s.source) for s in slides]
        write_deck(
            out / f"{page.split('/')[-1]}.html", plain_title(re.sub(r"<[^>]+>", "", title)), deck, html_lang(app)
        )
        # the lecture shows a chapter's slides in book/lecture.yml's order, which may differ from the book's
        order = [entry["cell"] for entry in lecture_selection(app.config.language).get(page.split("/")[-1], [])]
        chosen = sorted((s for s in slides if s.lecture), key=lambda s: order.index(s.source.split(":")[-1]))
        lecture += [("\n".join(s.lecture_blocks), s.notes, s.source) for s in chosen]
    if lecture:
        frame = lecture_frame(app.config.language)
        opening = [
            (
                f'<h1 class="deck-title">{_markup(frame["title"])}</h1><p class="deck-subtitle">'
                f"{_markup(frame['subtitle'])}</p>",
                notes_text(app.env, frame["title_notes"]),
                "",
            ),
            frame_slide(app.env, frame["anchor"], out),
        ]
        closing = [frame_slide(app.env, frame["closing"], out)]
        write_deck(out / "lecture.html", frame["title"], opening + lecture + closing, html_lang(app))


LECTURE = ROOT / "book" / "lecture.yml"
# the notes' roles besides {glue:text} (tests/test_summary_trace.py): a claim, a section
NOTE_REF = re.compile(r"\{ref\}`([^`<]*?)\s*<[^`>]+>`")
NOTE_NUMREF = re.compile(r"\{numref\}`([^`<]*?)\s*<([^`>]+)>`")
TEX = [(r"\\sqrt\{([^{}]*)\}", r"√\1"), (r"d_k", "dₖ"), (r"\^\\top", "ᵀ"), (r"\\[,;!]", ""), (r"\\cdot", "·")]


def lecture_selection(language: str | None = None) -> dict[str, list[dict]]:
    """book/lecture.yml's ``slides``: per chapter, the cells of the lecture with their notes."""
    return lecture_frame(language).get("slides", {})


def lecture_frame(language: str | None = None) -> dict:
    """book/lecture.yml, its messages in ``language``: the Chinese edition's come from the catalog
    locales/zh_CN/LC_MESSAGES/slides/lecture.po (tools/lecture_catalog.py writes it, as
    ``make locale`` writes the pages'); an untranslated message is a warning, an error under -W."""
    from tools import lecture_catalog

    frame = yaml.safe_load(LECTURE.read_text(encoding="utf-8"))
    if not language or language.startswith("en"):
        return frame
    table = lecture_catalog.translations()

    def translate(value):
        if isinstance(value, list):
            return [translate(v) for v in value]
        message = lecture_catalog.fold(value)
        if message not in table:
            from sphinx.util import logging

            logging.getLogger(__name__).warning(
                f"book/lecture.yml: untranslated (python -m tools.lecture_catalog): {message[:60]!r}"
            )
            return value
        return table[message]

    for key in ("title", "subtitle", "title_notes"):
        frame[key] = translate(frame[key])
    for part in ("anchor", "closing"):
        for key in lecture_catalog.FRAME_KEYS:
            if key in frame[part]:
                frame[part][key] = translate(frame[part][key])
    for entries in frame["slides"].values():
        for entry in entries:
            for key in lecture_catalog.SLIDE_KEYS:
                if key in entry:
                    entry[key] = translate(entry[key])
    return frame


def notes_text(env, text: str) -> str:
    """Speaker notes as the speaker view shows them: plain text, with each glued value pasted, each
    claim or section link as its text (a section's number as the book numbers it), math as symbols."""

    def section(match: re.Match) -> str:
        label = match.group(2)
        docname, anchor, _ = env.domaindata["std"]["labels"].get(label, ("", "", ""))
        secnumbers = env.toc_secnumbers.get(docname, {})
        numbers = secnumbers.get(f"#{anchor}")
        if numbers is None and docname:  # the toc numbers a section by its first id, not by its label
            for node in env.get_doctree(docname).findall(nodes.section):
                if anchor in node["ids"]:
                    numbers = secnumbers.get(f"#{node['ids'][0]}")
                    break
        return match.group(1).replace("%s", ".".join(map(str, numbers))) if numbers else label

    text = paste_glue_roles(text, glued_value)
    text = NOTE_NUMREF.sub(section, NOTE_REF.sub(lambda m: m.group(1), text))
    for pattern, plain in TEX:
        text = re.sub(pattern, plain, text)
    return html.escape(re.sub(r"\$([^$]+)\$", r"\1", text))


def glued_value(role: GlueRole) -> str:
    notebook = role.notebook(LECTURE)
    glued = {g.name: g.text for g in glued_outputs(read(notebook))} if notebook.is_file() else {}
    if glued.get(role.key) is None:
        raise ExtensionError(f"{LECTURE.name}: {role} names a value that {notebook.name} does not glue")
    return str(glued[role.key])


def _text(text: str) -> str:
    """Escaped plain text, with each {glue:text} role (written as on a page of book/) replaced by the
    value its notebook glued, formatted as the pages show it."""

    return html.escape(paste_glue_roles(text, glued_value))


def frame_figure(name: str, language: str | None) -> Path:
    """The glued figure ``name`` (``book/_generated``) as the edition shows it: in Chinese, its copy
    with Chinese words from the same arrays (tools.figures.glue_copies: ``fig_x_zh``,
    ``fig_x_zh_wide``), where the notebook glued one."""
    generated = ROOT / "book" / "_generated"
    chinese = generated / f"{chinese_copy(name)}.png"
    if language and language.startswith("zh") and chinese.is_file():
        return chinese
    return generated / f"{name}.png"


def frame_slide(env, spec: dict, out: Path) -> tuple[str, str, str]:
    """A slide of the lecture's frame: a heading, a glued figure, optional points."""
    figure = frame_figure(spec["figure"], env.config.language)
    body = f"<h2>{_markup(spec['heading'])}</h2>"
    if spec.get("points"):
        body += "<ul>" + "".join(f"<li>{_markup(p)}</li>" for p in spec["points"]) + "</ul>"
    if figure.is_file():
        shutil.copy(figure, out / figure.name)
        body += f'<img class="frame-figure" src="{figure.name}" alt="{_text(spec["alt"])}">'
    return body, notes_text(env, spec["notes"]), ""


# --- 5. Links to the kit from the book's pages ----------------------------------------------
# The decks and the PDFs are not Sphinx documents: they are written after the pages
# (write_decks; tools/print_pdf.py), at fixed places in the site. ``{kit}`text <slides/lecture.html>```
# links one of them, relative to the page, in either edition (the Chinese site has its own
# decks and PDFs under zh/); a path outside KIT_PATHS is a build error, and
# tests/test_lecture.py opens every such link in the built site.
PDFS = {  # file in the site's lecture/ folder: what it is
    "lecture.pdf": "the lecture deck, one 16:9 slide a page",
    "lecture-notes.pdf": "the lecture deck with its speaker notes",
    "cheatsheet.pdf": "the cheat sheet, one page",
    "quiz.pdf": "the quiz for students",
    "quiz-answers.pdf": "the quiz's answer key",
}


def kit_paths() -> set[str]:
    decks = {f"slides/{p.stem}.html" for p in chapter_notebooks()} | {"slides/lecture.html"}
    return decks | {f"lecture/{name}" for name in PDFS}


def kit_reference(env, docname: str, text: str, target: str, rawtext: str = "") -> nodes.reference:
    from sphinx.util.osutil import relative_uri

    uri = relative_uri(env.app.builder.get_target_uri(docname), target)
    return nodes.reference(rawtext, text, refuri=uri, internal=False, classes=["kit-link"])


def kit_role(name, rawtext, text, lineno, inliner, options=None, content=()):

    match = re.fullmatch(r"(?s)(.*?)\s*<([^<>]+)>", text.strip())
    label, target = (match.group(1), match.group(2)) if match else (text, text)
    if target not in kit_paths():
        message = inliner.reporter.error(f"{{kit}} links only the kit {sorted(kit_paths())}: {target!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    env = inliner.document.settings.env
    return [kit_reference(env, env.docname, label, target, rawtext)], []


class ChapterDecks(Directive):
    """``{chapter-decks}``: a list of every chapter's deck, titled as the chapter (in the page's language)."""

    has_content = False

    def run(self):
        return [chapter_decks_placeholder()]


class chapter_decks_placeholder(nodes.General, nodes.Element):  # noqa: N801
    pass


def fill_chapter_decks(app, doctree, docname):
    env = app.env
    for placeholder in list(doctree.findall(chapter_decks_placeholder)):
        items = nodes.bullet_list()
        for notebook in chapter_notebooks():
            page = f"notebooks/{notebook.stem}"
            reference = kit_reference(env, docname, "", f"slides/{notebook.stem}.html")
            # the chapter's title as its page shows it, math included
            reference.extend(child.deepcopy() for child in env.titles[page].children)
            paragraph = nodes.paragraph()
            paragraph += reference
            items += nodes.list_item("", paragraph)
        placeholder.replace_self(items)


# --- 6. The kit's PDFs, printed at the end of the build -------------------------------------
KIT_PRINTED_FROM = ("slides/lecture.html", "book/cheatsheet.html", "book/quiz.html")


def print_kit_pdfs(app, exception):
    """Print the PDFs (tools/print_pdf.py) into the site's lecture/ folder, unless nothing they
    are printed from has changed. Without Chromium the site is still built, with a message;
    in CI (``CI`` set) that is an error, since the tests check every PDF."""
    import hashlib
    import os

    from sphinx.errors import ExtensionError
    from sphinx.util import logging

    from tools import print_pdf

    out = Path(app.outdir)
    if exception is not None or app.builder.format != "html" or not (out / "slides" / "lecture.html").is_file():
        return
    log = logging.getLogger(__name__)
    digest = hashlib.sha256()
    for source in [out / p for p in KIT_PRINTED_FROM] + [HERE / "deck.js", HERE / "deck.css", Path(print_pdf.__file__)]:
        digest.update(source.read_bytes())
    stamp = Path(app.doctreedir) / "kit-pdfs.sha256"
    if (
        stamp.is_file()
        and stamp.read_text() == digest.hexdigest()
        and all((out / "lecture" / n).is_file() for n in PDFS)
    ):
        return
    try:
        print_pdf.print_kit(out, log=log.info)
    except print_pdf.NoChromium as error:
        if os.environ.get("CI"):
            raise ExtensionError(f"the lecture kit's PDFs: {error}") from error
        log.info(f"book_slides: the lecture kit's PDFs are not in this build: {error}")
        return
    stamp.write_text(digest.hexdigest())


def setup(app):
    _install_cell_markers()
    app.add_role("kit", kit_role)
    app.add_directive("chapter-decks", ChapterDecks)
    app.add_node(chapter_decks_placeholder)
    app.connect("doctree-resolved", fill_chapter_decks)
    app.connect("html-page-context", collect)
    app.connect("build-finished", write_decks)
    app.connect("build-finished", print_kit_pdfs)  # after write_decks: it prints the lecture deck
    return {"parallel_read_safe": True, "parallel_write_safe": False}
