"""The helpers page and make check's stamps read the same index of helpers/ (tools/helpers_index.py):
every export is listed under its module, each chapter's calls are found, and the built page of both
editions has an anchor for each export and a link to each chapter that calls it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import helpers
from tools.helpers_index import chapter_label, code_sources, helpers_imports, modules
from tools.notebook_format import chapter_notebooks


def test_every_export_is_listed_under_the_module_that_defines_it():
    listed = {d.name: m.name for m in modules() for d in m.definitions if d.exported}
    assert set(listed) == set(helpers.__all__)
    for name, module in listed.items():
        value = getattr(helpers, name)
        if callable(value):  # a function or class: Python knows where it was defined
            assert value.__module__ == f"helpers.{module}", name
        else:  # a constant: the module's own attribute is the same object
            assert getattr(getattr(helpers, module), name) is value, name


def test_each_chapters_calls_are_found():
    by_name = {d.name: d for m in modules() for d in m.definitions if d.exported}
    for notebook in chapter_notebooks():
        used = {n for source in code_sources(notebook) for n in helpers_imports(source)} & set(by_name)
        assert used, f"{notebook.name} calls no helper: the index reads no code"
        for name in used:
            assert notebook.stem in by_name[name].chapters, (notebook.name, name)


def test_imports_are_read_as_python_spells_them():
    source = "import helpers\nfrom helpers import glue, table  # two\nfrom helpers.training import (\n  train,\n)\n"
    source += "x = helpers.softmax_entropy(y)\nimport helpers.online as online\n"
    assert helpers_imports(source) == {"glue", "table", "training", "softmax_entropy", "online"}
    assert chapter_label("07b_advanced_questions") == "7b" and chapter_label("03_softmax_saturation") == "3"


def test_the_built_page_lists_every_export_in_both_editions(built_site: Path):
    by_name = {d.name: d for m in modules() for d in m.definitions if d.exported}
    for page in (built_site / "book" / "helpers.html", built_site / "zh" / "book" / "helpers.html"):
        text = page.read_text(encoding="utf-8")
        for name in by_name:
            assert f'id="helpers-{name}"' in text, f"{page}: no anchor for {name}"
        for stem in {s for d in by_name.values() for s in d.chapters}:
            assert re.search(rf'href="\.\./notebooks/{stem}\.html"', text), f"{page}: no link to {stem}"
        assert text.count('<details class="helpers-source">') == len(modules())


def _first_helper_call(notebook: Path) -> str:
    """The first helper a visible code cell of ``notebook`` calls (not folded, not removed), read from the
    notebook's source, not from the page: ``helpers.f(``, ``module.f(`` or ``f(`` after ``from helpers... import f``."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = modules()
    defined, qualifiers = {d.name for m in found for d in m.definitions}, {"helpers"} | {m.name for m in found}
    bare: set[str] = set()
    for cell in cells:
        source = "".join(cell["source"])
        for line in re.findall(r"^from helpers(?:\.\w+)? import ([^\n(]+)$", source, re.M):
            bare.update(n.strip() for n in line.split(",") if " as " not in n)
        hidden = {"remove-cell", "remove-input", "hide-input", "hide-cell"} & set(cell["metadata"].get("tags", []))
        if cell["cell_type"] != "code" or hidden:
            continue
        code = re.sub(r"#[^\n]*|\"[^\"\n]*\"|'[^'\n]*'", "", source)  # comments and strings call nothing
        for call in re.finditer(r"(?<![\w.])(?:(\w+)\.)?(\w+)\(", code):
            qualifier, name = call.groups()
            if name in defined and (qualifier in qualifiers if qualifier else name in bare):
                return name
    raise AssertionError(f"{notebook.name}: no visible code cell calls a helper")


def test_each_chapters_first_helper_call_links_to_its_entry_in_both_editions(built_site: Path):
    # From a chapter to the function it calls: book/_ext/helpers_api.link_helpers links the names a code
    # cell takes from helpers. The first call in a visible cell must link; every link must land on an entry.
    for edition in (built_site, built_site / "zh"):
        ids = set(re.findall(r'id="(helpers-[^"]+)"', (edition / "book" / "helpers.html").read_text(encoding="utf-8")))
        for notebook in chapter_notebooks():
            page = edition / "notebooks" / f"{notebook.stem}.html"
            links = re.findall(
                r'<a class="reference internal helpers-link" href="\.\./book/helpers\.html#([^"]+)"[^>]*>'
                r'<span class="n">(\w+)</span></a>',
                page.read_text(encoding="utf-8"),
            )
            missing = sorted({anchor for anchor, _ in links} - ids)
            assert not missing, f"{page}: links to entries the helpers page lacks: {missing}"
            first = _first_helper_call(notebook)
            assert (f"helpers-{first}", first) in links, f"{page}: the first helper call, {first}, links nowhere"


def test_each_module_says_what_it_is_for():
    # which chapters reach a module is derived, and shown only on the helpers page (book/_ext/helpers_api.py)
    for module in modules():
        lines = module.docstring.splitlines()
        assert lines and lines[0].endswith("."), f"helpers/{module.name}.py: no one-line purpose on top"
        assert not any(line.startswith("Chapters: ") for line in lines), f"helpers/{module.name}.py: a derived line"
