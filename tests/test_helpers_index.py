"""The helpers page and make check's stamps read the same index of helpers/ (tools/helpers_index.py):
every export is listed under its module, each chapter's calls are found, and the built page of both
editions has an anchor for each export and a link to each chapter that calls it."""

from __future__ import annotations

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
