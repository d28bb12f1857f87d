"""The ``{helpers-api}`` directive: the helpers page of the book (``book/helpers.md``).

For every module of ``helpers/``, in reading order (``tools/helpers_index.READING_ORDER``):
its docstring, each public function, class and constant with its signature and docstring,
the chapters whose code calls it (linked), and the module's whole source, folded. All of it
is read from the source with ``ast`` (``tools/helpers_index.py``), never imported, so the
build needs no torch, and it cannot go stale: a new function appears on the next build.

Docstrings and code are shown as code, in English in both editions (they are the code's
documentation, and a learner reads them again in the source); the generated nodes carry no
source, so Sphinx's gettext leaves them out of the catalogs. The page's own prose, in
``book/helpers.md``, is translated like every page. The few labels this directive writes
come in both languages (``LABELS``).

From a chapter to the function it calls: in every chapter's code cells, a name the cell takes
from ``helpers`` (``helpers.train``, ``diagnostics.CORRECT``, or ``glue`` after ``from helpers
import glue``) links to its entry on this page, in both editions (``link_helpers``, on the
highlighted HTML, as sphinx-codeautolink links names to their API entries).
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.helpers_index import Definition, Module, chapter_label, code_sources, modules  # noqa: E402
from tools.notebook_format import ROOT  # noqa: E402

LABELS = {
    "en": {
        "lines": "{n} lines",
        "reached": "Reached by the runs of chapters",
        "reached_none": "No chapter's run reaches it (the tests use it)",
        "used": "Called in chapters",
        "used_none": "Not called by a chapter directly",
        "flat": "also helpers.{name}",
        "source": "The source of helpers/{module}.py ({n} lines)",
    },
    "zh_CN": {
        "lines": "{n} 行",
        "reached": "运行时会用到它的章节",
        "reached_none": "没有章节的运行会用到它（测试会用）",
        "used": "调用它的章节",
        "used_none": "没有章节直接调用",
        "flat": "也可写作 helpers.{name}",
        "source": "helpers/{module}.py 的源码（{n} 行）",
    },
}


class HelpersApi(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(Path(__file__)))
        labels = LABELS.get(self.config.language or "en", LABELS["en"])
        found = modules()
        for module in found:
            self.env.note_dependency(str(module.path))
        return [self.module_section(module, labels) for module in found]

    def chapter_links(self, stems: list[str], label: str, none: str) -> nodes.paragraph:
        paragraph = nodes.paragraph(classes=["helpers-chapters"])
        if not stems:
            paragraph += nodes.emphasis(text=none)
            return paragraph
        paragraph += nodes.Text(f"{label}: ")
        for i, stem in enumerate(stems):
            if i:
                paragraph += nodes.Text(", ")
            reference = addnodes.pending_xref(
                "", refdomain="std", reftype="doc", reftarget=f"/notebooks/{stem}", refexplicit=True
            )
            reference["refdoc"] = self.env.docname
            reference += nodes.inline(text=chapter_label(stem))
            paragraph += reference
        return paragraph

    def module_section(self, module: Module, labels: dict[str, str]) -> nodes.section:
        section = nodes.section(ids=[f"helpers-{module.name.strip('_')}"])
        title = nodes.title("", "", nodes.literal(text=f"helpers.{module.name}"))
        title["translatable"] = False  # a module's name, the same in both editions
        section += title
        section += nodes.paragraph(text=labels["lines"].format(n=module.lines))
        section += self.chapter_links(module.chapters, labels["reached"], labels["reached_none"])
        docstring = module.docstring.strip()  # the chapters that reach it: the paragraph above, linked
        if docstring:
            section += nodes.literal_block(docstring, docstring, language="text")
        if module.definitions:
            listing = nodes.definition_list(classes=["helpers-api"])
            for definition in module.definitions:
                listing += self.definition_item(definition, labels)
            section += listing
        source = module.path.read_text(encoding="utf-8")
        summary = html.escape(labels["source"].format(module=module.name, n=module.lines))
        section += nodes.raw("", f'<details class="helpers-source"><summary>{summary}</summary>', format="html")
        block = nodes.literal_block(source, source, language="python", linenos=True)
        section += block
        section += nodes.raw("", "</details>", format="html")
        return section

    def definition_item(self, definition: Definition, labels: dict[str, str]) -> nodes.Node:
        item = nodes.definition_list_item()
        term = nodes.term(ids=[f"helpers-{definition.name}"])
        term += nodes.literal(text=definition.signature)
        if definition.exported:
            term += nodes.inline(text=f"  ({labels['flat'].format(name=definition.name)})", classes=["helpers-flat"])
        item += term
        body = nodes.definition()
        if definition.docstring:
            body += nodes.literal_block(definition.docstring, definition.docstring, language="text")
        body += self.chapter_links(definition.chapters, labels["used"], labels["used_none"])
        item += body
        return item


HELPERS_PAGE = "book/helpers"
# A code cell's input as myst-nb and Pygments write it, a name token in it, and the dot before an attribute
CELL_INPUT = re.compile(
    r'(<div class="cell_input[^"]*">\s*<div class="highlight[^"]*"><div class="highlight"><pre>)(.*?)(</pre>)', re.S
)
NAME = re.compile(r'<span class="n">(\w+)</span>')
DOT = '<span class="o">.</span>'


def _names_of(found: list[Module], sources: list[str]) -> tuple[dict[str, set[str]], set[str]]:
    """What a chapter's code can name: the definitions reachable by attribute from ``helpers`` and from
    each module (by the module's name), and the bare names its ``from helpers... import`` lines bind."""
    by_module = {m.name: {d.name for d in m.definitions} for m in found}
    attributes = {"helpers": {d.name for m in found for d in m.definitions if d.exported} | set(by_module)}
    attributes.update(by_module)
    code = "\n".join(sources)
    bare = set()
    for match in re.finditer(r"^[ \t]*from helpers(?:\.(\w+))?[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", code, re.M):
        names = re.sub(r"#[^\n]*", "", match.group(2)).strip("()").replace("\n", ",").split(",")
        pool = by_module.get(match.group(1), set()) if match.group(1) else attributes["helpers"]
        bare.update(n.strip() for n in names if n.strip() in pool)  # "x as y" is in no pool: left unlinked
    return attributes, bare


def link_helpers(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Link the helper names in a chapter's code cells to their entries on the helpers page."""
    notebook = ROOT / f"{pagename}.ipynb"
    if "body" not in context or not pagename.startswith("notebooks/") or not notebook.is_file():
        return
    found = modules()
    anchors = {d.name for m in found for d in m.definitions} | {m.name for m in found}  # ids helpers-<name>
    attributes, bare = _names_of(found, code_sources(notebook))
    page = app.builder.get_relative_uri(pagename, HELPERS_PAGE)

    def link_cell(cell: re.Match[str]) -> str:
        code, ends = cell[2], {}  # ends: where each name token ends -> the name

        def link(token: re.Match[str]) -> str:
            name, start = token[1], token.start()
            ends[token.end()] = name
            qualifier = ends.get(start - len(DOT)) if code[start - len(DOT) : start] == DOT else None
            if qualifier is not None:
                linked = name in attributes.get(qualifier, ())
            else:
                linked = name in bare and code[max(0, start - len(DOT)) : start] != DOT
            if not linked or name not in anchors:
                return token[0]
            href = f"{page}#helpers-{name.strip('_')}"  # the ids the directive gives (module _validate: validate)
            return f'<a class="reference internal helpers-link" href="{href}" title="helpers: {name}">{token[0]}</a>'

        return cell[1] + NAME.sub(link, code) + cell[3]

    context["body"] = CELL_INPUT.sub(link_cell, context["body"])


def setup(app):
    app.add_directive("helpers-api", HelpersApi)
    app.connect("html-page-context", link_helpers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
