"""What the book's notebooks look like, known in one place.

The tools (``tools/``), the Sphinx extensions (``book/_ext/``) and the tests
import this module instead of spelling the same facts again: where the
notebooks are and in which order (``_toc.yml``), how a glued value is stored in
an output, which cell is the Colab setup cell, and which code cells are
*plumbing* (they only assert or glue, and the page folds them away).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import yaml

# The record format myst-nb reads for {glue:text}: the value's display bundle under
# prefixed mime types. helpers.book writes it (a notebook needs no tools/); it is spelled
# here too so that no tool imports helpers, and with it torch, to read one string
# (tests/test_tools.py pins the two; tests/test_device_style_glue.py pins helpers.glue to myst_nb.glue).
GLUE_PREFIX = "application/papermill.record/"

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
COLAB_MARKER = "# Setup:"  # the first line of the setup cell (tools/colab_cell.py)
FOLD_TAGS = ("hide-input", "remove-input", "remove-cell", "hide-cell")
# A local kernel says at start that it talks over TCP without encryption; in our tools' output that is noise.
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]

__all__ = [
    "COLAB_MARKER",
    "FOLD_TAGS",
    "GLUE_PREFIX",
    "Glued",
    "NOTEBOOK_DIR",
    "QUIET_KERNEL",
    "ROOT",
    "chapter_notebooks",
    "count_words",
    "glued_outputs",
    "is_plumbing",
    "main_path_prose",
    "read",
    "tags",
    "toc_files",
]


def toc_files() -> list[str]:
    """Every file ``_toc.yml`` lists (root first, then in reading order), without suffix."""

    def walk(entries: list[dict[str, Any]]) -> Iterator[str]:
        for entry in entries:
            if "file" in entry:
                yield entry["file"]
            for key in ("parts", "chapters", "sections"):
                yield from walk(entry.get(key, []))

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], *walk(toc.get("parts", []) + toc.get("chapters", []))]


def chapter_notebooks() -> list[Path]:
    """The chapter notebooks, in the order of the table of contents."""
    return [ROOT / f"{file}.ipynb" for file in toc_files() if (ROOT / f"{file}.ipynb").is_file()]


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


@dataclass(frozen=True)
class Glued:
    """One glued value as the committed notebook stores it."""

    name: str
    cell_index: int
    text: str | None  # the text/plain form, what {glue:text} pastes
    band: tuple[float, float] | None  # declared for statistics of chaotic processes
    is_figure: bool


def glued_outputs(notebook: nbformat.NotebookNode) -> Iterator[Glued]:
    """Every glue record in the notebook's outputs, in cell order."""
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if not record or "name" not in record:
                continue
            data = output.get("data", {})
            text = data.get(GLUE_PREFIX + "text/plain")
            band = record.get("band")
            yield Glued(
                name=record["name"],
                cell_index=index,
                text="".join(text) if isinstance(text, list) else text,
                band=(float(band[0]), float(band[1])) if band else None,
                is_figure=GLUE_PREFIX + "image/png" in data,
            )


def _is_glue_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "glue" or name.startswith("glue_")


def is_plumbing(source: str) -> bool:
    """True for a code cell that only checks (``assert``) or publishes (``glue``) results.

    Such a cell may compute the values it checks (assignments, loops, small
    function definitions) but shows nothing: no print, no plot, no table. The
    page folds it (``hide-input``), so the argument reads without it and its
    proof is one click away.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: never plumbing
        return False
    found = False

    def only_checks(statements: list[ast.stmt]) -> bool:
        nonlocal found
        for statement in statements:
            if isinstance(statement, ast.Assert) or isinstance(statement, ast.Expr) and _is_glue_call(statement.value):
                found = True
            elif isinstance(
                statement,
                (
                    ast.Assign,
                    ast.AugAssign,
                    ast.AnnAssign,
                    ast.Import,
                    ast.ImportFrom,
                    ast.FunctionDef,
                    ast.Pass,
                    ast.Delete,
                ),
            ):
                continue
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring or a bare string
            elif isinstance(statement, (ast.For, ast.While, ast.If)):
                if not (only_checks(statement.body) and only_checks(statement.orelse)):
                    return False
            elif isinstance(statement, ast.With):
                if not only_checks(statement.body):
                    return False
            else:
                return False
        return True

    return only_checks(tree.body) and found


FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})\s*(\{([\w:-]+)\})?(.*)$")
FOLDED_DIRECTIVES = {"dropdown", "exercise", "solution"}


def main_path_prose(notebook: nbformat.NotebookNode) -> str:
    """The prose a reader meets on the main path of a chapter page.

    Markdown cells only, without what the page folds or sets apart: the
    contents of ``{dropdown}``, ``{exercise}`` and ``{solution}`` blocks (and of
    any directive with ``:class: dropdown``), cells tagged ``hide-cell`` or
    ``remove-cell``, code fences, display math and MyST label lines.
    """
    kept: list[str] = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown" or set(tags(cell)) & {"hide-cell", "remove-cell"}:
            continue
        stack: list[tuple[str, bool]] = []  # (fence, folded) of the open blocks
        lines = cell.source.splitlines()
        for i, line in enumerate(lines):
            match = FENCE.match(line)
            folded_here = any(folded for _, folded in stack)
            if (
                match
                and stack
                and match.group(2)[0] == stack[-1][0][0]
                and len(match.group(2)) >= len(stack[-1][0])
                and not match.group(3)
                and not match.group(5).strip()
            ):
                stack.pop()
                continue
            if match and (match.group(3) or match.group(2).startswith("`")):
                name = match.group(4) or ""
                options = "\n".join(lines[i + 1 : i + 4])
                folded = name in FOLDED_DIRECTIVES or ":class: dropdown" in options or not name  # code fence
                stack.append((match.group(2), folded))
                continue
            if folded_here or line.lstrip().startswith(":") or re.match(r"^\(\S+\)=\s*$", line):
                continue
            kept.append(line)
    text = "\n".join(kept)
    return re.sub(r"\$\$.*?\$\$(\s*\(\S+\))?", " ", text, flags=re.S)


def count_words(text: str) -> int:
    text = re.sub(r"\{[\w:-]+\}`([^`<]*)(<[^`]*>)?`", r"\1", text)  # a role counts as its visible text
    text = re.sub(r"\$[^$]+\$", "x", text)  # inline math counts as one word
    return len(re.findall(r"[^\W_][\w'’-]*", text))
