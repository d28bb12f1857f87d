"""What the book's notebooks look like, known in one place.

The tools (``tools/``), the Sphinx extensions (``book/_ext/``) and the tests
import this module instead of spelling the same facts again: where the
notebooks are and in which order (``_toc.yml``), how a glued value is stored in
an output, how prose quotes it (the glue roles: ``parse_glue_role``), which cell
starts the learner notebooks' setup cell, and which code cells are *plumbing* (they only assert or
glue, and the page folds them away).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
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
# How the Chinese edition joins authors in an inline citation (「Kingma 和 Ba, 2015」, 「Liu 等, 2022」):
# the site (book/_ext/zh_edition.py) and the learner notebooks (tools/learner.py) alike.
ZH_AUTHOR_AND, ZH_ET_AL = " 和 ", " 等"
# ... with full-width separators, as Chinese author-year citations print them: 「Liu 等，2022；Dao 等，2022」
ZH_YEAR_SEP, ZH_CITATION_SEP = "，", "；"


def chinese_copy(name: str) -> str:
    """The glue name of a figure's Chinese copy, as tools.figures.glue_copies names it: ``fig_x`` ->
    ``fig_x_zh``, and a wide layout ``fig_x_wide`` -> ``fig_x_zh_wide``."""
    return f"{name.removesuffix('_wide')}_zh_wide" if name.endswith("_wide") else f"{name}_zh"


# the pybtex style of the Chinese edition's citation tooltips (book/_ext/zh_edition.py registers it)
ZH_TOOLTIP_STYLE = "plain_without_notes"

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
COLAB_MARKER = "# Setup:"  # the first line of the learner notebooks' setup cell (tools/learner.py)
FOLD_TAGS = ("hide-input", "remove-input", "remove-cell", "hide-cell")
# A local kernel says at start that it talks over TCP without encryption; in our tools' output that is noise.
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]

__all__ = [
    "COLAB_MARKER",
    "FOLD_TAGS",
    "GLUE_DIRECTIVE",
    "GLUE_PREFIX",
    "GLUE_ROLE",
    "GlueRole",
    "Glued",
    "NOTEBOOK_DIR",
    "QUIET_KERNEL",
    "ROLE",
    "ROOT",
    "chapter_notebooks",
    "count_words",
    "glue_roles",
    "averages_to",
    "glued_numbers",
    "glued_outputs",
    "is_build_only",
    "is_plumbing",
    "main_path_prose",
    "parse_glue_role",
    "paste_glue_roles",
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


def design_cell(path: Path, marker: str, given: dict | None = None) -> dict:
    """The names that a notebook's design cell (its one code cell containing ``marker``, constants only)
    defines, with those of ``given`` (an earlier design cell's names, which this one may read)."""
    cells = [c for c in read(path).cells if c.cell_type == "code" and marker in c.source]
    if len(cells) != 1:
        raise SystemExit(f"{path.name}: expected one code cell that assigns {marker.strip(' =')}, found {len(cells)}")
    names: dict = dict(given or {})
    exec(compile(cells[0].source, f"{path.name} (design cell)", "exec"), names)  # noqa: S102
    return names


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


def glued_numbers(text: str) -> list[float]:
    """The numbers of a glued list, from its text as IPython prints it (``[0.688,\n 0.687, ...]``)."""
    values = ast.literal_eval(text)
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) for v in values):
        raise ValueError(f"not a glued list of numbers: {text[:40]!r}")
    return [float(v) for v in values]


def averages_to(values: list[float], text: str, rounding: float = 5e-3) -> bool:
    """Whether ``values`` (each rounded to within ``rounding`` of itself, relatively) average to the glued
    number ``text`` to the last digit it shows: the per-seed values of a statistic and its published mean."""
    import decimal

    unit = 10.0 ** decimal.Decimal(text).as_tuple().exponent  # "0.67" -> 0.01, "4e-07" -> 1e-07
    mean = sum(values) / len(values)
    return abs(mean - float(text)) <= unit / 2 + rounding * max(abs(v) for v in values)


BUILD_SIDE = re.compile(r"^from tools import figures\b", re.M)


def is_build_only(cell: Any) -> bool:
    """A build-only cell: tagged ``remove-cell``, it makes what the build shows besides the chapter (a figure's
    other layouts and Chinese copies, ``from tools import figures``). Learners never run it."""
    return cell.cell_type == "code" and "remove-cell" in tags(cell) and bool(BUILD_SIDE.search(cell.source))


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


# ---------------------------------------------------------------------------------- glue roles
# How prose quotes a glued value, as myst-nb 1.4.0 reads it (myst_nb/ext/glue/roles.py, domain.py;
# https://github.com/executablebooks/MyST-NB/blob/v1.4.0/myst_nb/ext/glue/roles.py):
#
#   {glue:text}`[path::]key[:format]`   the value's text/plain form, through format(value, format)
#                                       (the format ends in its type: .3f, #.2g, .1%, s)
#   {glue}`[path::]key`                 the value by its richest MIME type; also {glue:}, {glue:any}
#   {glue:md}`key[:commonmark|gfm|myst]` the value's markdown, from this page's notebook only
#
# ``path`` is the notebook that glued the value, relative to the page: on any page of the book
# ``../notebooks/03_softmax_saturation.ipynb`` (book/ and notebooks/ are both one level down).
# myst-nb 1.4.0 splits a {glue:text} role at its last colon before it looks for ``::``
# (roles.py:79-87), so ``path::key`` without a format would be read as the key ``path:`` with
# the format ``key``: a role that quotes another page always names its format (``:s`` at least).
# tests/test_glue_grammar.py runs myst-nb's own roles on the same contents and checks that both agree.

ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")  # any MyST role, whole: {glue:text}`k`, {ref}`x <y>`, {eq}`eq-x`
GLUE_ROLE = re.compile(r"\{glue(?P<kind>:(?:any|text|md)?)?\}`(?P<content>[^`]*)`")
_KEY = r"(?P<key>[A-Za-z0-9_]+)"
# the directives ```{glue:figure} key``` (and glue, glue:any, glue:math, glue:md; another page's
# value through their :doc: option, never a path in the argument)
_DIRECTIVE_NAME = r"\{glue(?::(?:any|figure|math|md))?\}"
GLUE_DIRECTIVE = re.compile(r"^[ \t]*(?:`{3,}|:{3,})" + _DIRECTIVE_NAME + r"[ \t]+" + _KEY + r"[ \t]*$", re.M)
_PATH = r"(?:(?P<path>[^`:][^`]*?)::)?"
_CONTENT = {  # kind -> (its content, as a pattern and as the error message spells it)
    "text": (re.compile(_PATH + _KEY + r"(?::(?P<format>[^:`]+))?"), "`[path::]key[:format]`"),
    "any": (re.compile(_PATH + _KEY), "`[path::]key`"),
    "md": (re.compile(_KEY + r"(?::(?P<format>commonmark|gfm|myst))?"), "`key[:commonmark|gfm|myst]`"),
}


@dataclass(frozen=True)
class GlueRole:
    """One glue role of the prose: which value it quotes (``path``, ``key``) and how (``kind``, ``format``)."""

    kind: str  # "text", "any" or "md"
    key: str
    path: str | None = None  # the notebook that glued it, relative to the page; None: the page's own notebook
    format: str | None = None  # a format spec ({glue:text}) or a markdown flavour ({glue:md})

    def __str__(self) -> str:
        """The role, written so that myst-nb 1.4.0 reads it as meant (another page's text gets ``:s``)."""
        role = {"text": "{glue:text}", "any": "{glue}", "md": "{glue:md}"}[self.kind]
        form = self.format or ("s" if self.kind == "text" and self.path else None)
        return f"{role}`{self.path + '::' if self.path else ''}{self.key}{':' + form if form else ''}`"

    @property
    def misread_by_myst_nb(self) -> bool:
        """True for ``{glue:text}`path::key``` without a format, which myst-nb 1.4.0 reads wrongly (above)."""
        return self.kind == "text" and self.path is not None and self.format is None

    def notebook(self, page: Path) -> Path:
        """The notebook whose outputs hold the value, for a role on ``page`` (a notebook or a page of book/)."""
        return (page.parent / self.path).resolve() if self.path else page.with_suffix(".ipynb")


def parse_glue_role(role: str) -> GlueRole:
    """``{glue:text}`../notebooks/03_x.ipynb::key:.2f``` → GlueRole("text", "key", "../notebooks/03_x.ipynb", ".2f").

    A ValueError for text that is not one glue role, or a content its kind does not take (a
    path in {glue:md}, a format in {glue}, a key with characters other than letters, digits and _).
    """
    match = GLUE_ROLE.fullmatch(role.strip())
    if not match:
        raise ValueError(f"not a glue role: {role!r}")
    kind = (match.group("kind") or "").lstrip(":") or "any"
    pattern, form = _CONTENT[kind]
    content = pattern.fullmatch(match.group("content"))
    if not content:
        raise ValueError(f"{role!r}: a {{glue:{kind}}} role takes {form}")
    parts = content.groupdict()
    return GlueRole(kind, parts["key"], parts.get("path"), parts.get("format"))


def glue_roles(text: str) -> Iterator[GlueRole]:
    """Every glue role in ``text``, in order (a ValueError names a malformed one)."""
    for match in GLUE_ROLE.finditer(text):
        yield parse_glue_role(match.group(0))


def paste_glue_roles(text: str, value: Callable[[GlueRole], str]) -> str:
    """``text`` with every {glue:text} role replaced by what myst-nb would paste for it.

    ``value(role)`` returns the glued text/plain form (``Glued.text``) of the role's value; the
    format is applied as myst-nb applies it (``myst_nb.core.variables.format_plain_text``: the
    value is read back as a Python literal, then formatted, with ``s`` when the role gives none),
    so an alt text or a lecture slide shows exactly what the prose shows.
    """
    from myst_nb.core.variables import format_plain_text

    def paste(match: re.Match[str]) -> str:
        role = parse_glue_role(match.group(0))
        if role.kind != "text":
            raise ValueError(f"{match.group(0)!r}: only {{glue:text}} can be pasted into plain text")
        return str(format_plain_text(value(role), role.format or "s"))

    return GLUE_ROLE.sub(paste, text)
