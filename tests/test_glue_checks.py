"""Every glued number is checked after a fresh run, and the book uses every one.

Two kinds of check (helpers.glue explains them):

- **exact**: the glue sits in a cell that strict nbval compares, so a fresh run
  must reproduce the committed value character for character;
- **band**: the glue sits in a cell tagged ``nbval-ignore-output`` (a statistic
  of a chaotic process, such as training) and declares ``band=(low, high)``;
  ``helpers.glue`` raises if a fresh run's value leaves it.

A glue that is neither fails here. The test also writes the full list, name by
name with its check, to ``_build/glue-checks.md``.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest
import yaml

from tools.notebook_format import (
    GLUE_DIRECTIVE,
    ROOT,
    chapter_notebooks,
    glue_roles,
    glued_numbers,
    glued_outputs,
    read,
    tags,
)

NOT_COMPARED = {"nbval-ignore-output", "nbval-skip", "raises-exception"}
PAGES = sorted((ROOT / "book").glob("*.md"))
SEED_QUOTE = re.compile(r"^(\w+)_seeds_(?:min|median|max)$")
GENERATED_FIGURE = re.compile(r"_generated/([A-Za-z0-9_]+)\.png")  # a glued figure on another page (glued_figures.py)


def sanitize_patterns() -> list[re.Pattern[str]]:
    text = (ROOT / "tests" / "nbval-sanitize.cfg").read_text(encoding="utf-8")
    parser = configparser.ConfigParser()
    parser.read_string(text)
    return [re.compile(parser[section]["regex"]) for section in parser.sections()]


def check_of(notebook, glued) -> str | None:
    cell_tags = set(tags(notebook.cells[glued.cell_index]))
    if glued.is_figure:
        return "figure"
    if glued.band is not None:
        low, high = glued.band
        return f"band [{low:g}, {high:g}]"
    if not cell_tags & NOT_COMPARED:
        return "exact"
    return None


def all_glues():
    for path in chapter_notebooks():
        notebook = read(path)
        for glued in glued_outputs(notebook):
            yield path, notebook, glued


def test_every_glued_number_is_checked():
    rows, unchecked = [], []
    for path, notebook, glued in all_glues():
        check = check_of(notebook, glued)
        rows.append(f"| {path.stem} | `{glued.name}` | {glued.text} | {check or 'UNCHECKED'} |")
        if check is None:
            unchecked.append(f"{path.name} cell {glued.cell_index}: {glued.name} = {glued.text}")
    report = ROOT / "_build" / "glue-checks.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(
        "| notebook | glue | value | check |\n|---|---|---|---|\n" + "\n".join(rows) + "\n", encoding="utf-8"
    )
    assert rows, "no glued values found"
    assert not unchecked, (
        "glued numbers that nothing checks (in a cell nbval ignores, without a band=(low, high)):\n"
        + "\n".join(unchecked)
    )


def test_committed_banded_values_lie_in_their_bands():
    """A fresh run cannot publish a value outside its band (``helpers.glue`` raises), so this holds
    by construction after every run; what it catches is a band edited in a notebook whose
    committed outputs were not re-executed (the page would show a value its own band rejects)."""
    for path, _, glued in all_glues():
        if glued.band is not None:
            values = glued_numbers(glued.text) if glued.text.startswith("[") else [float(glued.text)]
            assert all(glued.band[0] <= v <= glued.band[1] for v in values), (path.name, glued)


def test_sanitizers_never_touch_a_glued_number():
    patterns = sanitize_patterns()
    for path, notebook, glued in all_glues():
        if check_of(notebook, glued) == "exact":
            assert not any(p.search(glued.text or "") for p in patterns), f"{path.name}: {glued.name} is sanitized"


def test_glue_names_are_unique_within_a_notebook():
    for path in chapter_notebooks():
        names = [g.name for g in glued_outputs(read(path))]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        assert not duplicates, f"{path.name} glues these twice: {duplicates}"


def references() -> set[str]:
    texts = [page.read_text(encoding="utf-8") for page in PAGES]
    texts += [(ROOT / "book" / "claims.yml").read_text(encoding="utf-8")]
    for path in chapter_notebooks():
        for cell in read(path).cells:
            texts.append(cell.source if cell.cell_type == "markdown" else "")
            texts.append(str(cell.metadata.get("mystnb", "")))
    used: set[str] = set()
    for text in texts:
        used |= {role.key for role in glue_roles(text)}
        used |= set(GLUE_DIRECTIVE.findall(text)) | set(GENERATED_FIGURE.findall(text))
    # the scale explorer's marks and the per-seed values they must average to (book/_ext/scale_explorer.py reads both)
    explorer = yaml.safe_load((ROOT / "book" / "scale_explorer.yml").read_text(encoding="utf-8"))
    for entry in explorer["references"]:
        used |= {entry[key].split("::")[1] for key in ("glue", "per_seed") if key in entry}
    # a training number that the prose quotes by its range over the seed table (`<name>_seeds_min`, ...: a chapter's
    # build-only cell glues it, tools.seeds.glue_quoted) is in use: the table reads each run's value of it
    return used | {match.group(1) for match in map(SEED_QUOTE.match, used) if match}


def wide_layouts(notebook) -> set[str]:
    """The `<figure name>_wide` glues of a notebook's named figures: the site shows them in the figure's place on a
    desktop and the decks on a slide (CONTRIBUTING.md, "How a page reads"), so no page names them."""
    names = {cell.metadata.get("mystnb", {}).get("figure", {}).get("name", "") for cell in notebook.cells}
    return {name.replace("-", "_") + "_wide" for name in names if name}


@pytest.mark.parametrize("path", chapter_notebooks(), ids=lambda p: p.stem)
def test_every_glued_value_is_used(path: Path):
    wide = wide_layouts(read(path))
    used = references() | wide
    # a figure's Chinese copy is shown wherever the Chinese edition shows the figure (book/_ext/zh_edition.py):
    # in its place on the chapter's page too (a named figure, fig-two-logits: fig_two_logits_zh, _zh_wide)
    figures = used | {name.removesuffix("_wide") for name in wide}
    used |= {f"{name}_zh{layout}" for name in figures for layout in ("", "_wide")}
    unused = sorted({g.name for g in glued_outputs(read(path))} - used)
    assert not unused, f"{path.name} glues values that no page, caption or ledger entry shows: {unused}"
