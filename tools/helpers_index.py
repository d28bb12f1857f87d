"""What the chapters take from ``helpers``, read from the source (never imported: no torch).

One place for three questions that two tools ask:

- which names a cell or a module takes from ``helpers`` (``helpers_imports``);
- which files of ``helpers/`` a notebook's run can reach (``helpers_reached``): the key of
  ``make check``'s stamps (``tools/portability.py``);
- what each module defines and which chapters call it (``modules``): the helpers page of the
  book (``book/_ext/helpers_api.py``, ``book/helpers.md``).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from tools.notebook_format import ROOT, chapter_notebooks

# Modules that every run reads: the package (it imports every module, so an import error
# anywhere fails every notebook; `make check`'s unit tests import it too), the glue and table
# writer, the device and seed rules and the checks they call.
ALWAYS_REACHED = ("__init__.py", "book.py", "device.py", "_validate.py")
# The order the helpers page presents the modules in: the computation first, then the
# experiments built on it, then the book's own plumbing. A module not listed comes last.
READING_ORDER = (
    "attention",
    "softmax",
    "online",
    "scales",
    "training",
    "curves",
    "recall_runs",
    "run_stack",
    "controls",
    "diagnostics",
    "logit_rules",
    "sink",
    "device",
    "style",
    "book",
    "_validate",
)


def helpers_imports(source: str) -> set[str]:
    """Names a module or cell takes from ``helpers``: ``from helpers import a``, ``from helpers.m
    import b`` (module ``m``), ``import helpers.m``, and ``helpers.a`` / ``alias.a`` attributes."""
    names: set[str] = set()
    aliases = {"helpers"}
    for match in re.finditer(r"^[ \t]*import helpers(?:\.(\w+))?(?:[ \t]+as[ \t]+(\w+))?", source, re.M):
        if match.group(1):
            names.add(match.group(1))
        if match.group(2):
            aliases.add(match.group(2))
    for match in re.finditer(r"^[ \t]*from helpers(?:\.(\w+))?[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", source, re.M):
        if match.group(1):
            names.add(match.group(1))
        else:
            listed = re.sub(r"#[^\n]*", "", match.group(2)).strip("()")
            names.update(n.split(" as ")[0].strip() for n in listed.replace("\n", ",").split(",") if n.strip())
    for alias in aliases:
        names.update(re.findall(rf"\b{re.escape(alias)}\.(\w+)", source))
    return names


def module_imports(source: str) -> set[tuple[str, str]]:
    """``(module, name)`` for each ``from helpers.module import name`` of ``source``: the names that
    :func:`helpers_imports` counts as the module alone."""
    found = set()
    for match in re.finditer(r"^[ \t]*from helpers\.(\w+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", source, re.M):
        listed = re.sub(r"#[^\n]*", "", match.group(2)).strip("()")
        found.update(
            (match.group(1), n.split(" as ")[0].strip()) for n in listed.replace("\n", ",").split(",") if n.strip()
        )
    return found


def exported(root: Path = ROOT) -> dict[str, str]:
    """``helpers.X`` → the file that defines X, from ``helpers/__init__.py``'s re-exports."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse((root / "helpers" / "__init__.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helpers."):
            for alias in node.names:
                found[alias.asname or alias.name] = node.module.split(".", 1)[1] + ".py"
    return found


def helpers_reached(sources: list[str], root: Path = ROOT) -> set[str]:
    """The files of ``helpers/`` whose code a notebook with these code-cell sources can run.

    A name is traced to the module that defines it (``helpers/__init__.py``'s re-exports, or a
    module of that name), then through the imports between modules. A name it cannot trace
    (a new export, a star import) makes every file count: a stale stamp costs a rerun, a wrong
    current one would skip a notebook whose helper changed."""
    package = root / "helpers"
    files = {p.name for p in package.glob("*.py")}
    exports = exported(root)

    def module_of(name: str) -> str | None:
        return f"{name}.py" if f"{name}.py" in files else exports.get(name)

    always = [name[:-3] for name in ALWAYS_REACHED if name in files and name != "__init__.py"]
    todo = [name for source in sources for name in helpers_imports(source)] + always
    reached = {"__init__.py"}
    while todo:
        module = module_of(todo.pop())
        if module is None:
            return {p.name for p in package.iterdir() if p.is_file()}  # a name not traced: every file
        if module not in reached:
            reached.add(module)
            todo.extend(_imports_of_module((package / module).read_text(encoding="utf-8")))
    return reached


def _imports_of_module(source: str) -> set[str]:
    """What a module of ``helpers/`` takes from the package, read from its syntax tree: its imports
    (at the top or inside a function) and ``helpers.X`` attributes, never a name in a docstring."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "helpers":
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helpers."):
            names.add((node.module or "").split(".")[1])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[1] for a in node.names if a.name.startswith("helpers."))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "helpers":
            names.add(node.attr)
    return names


def code_sources(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in cells
        if c["cell_type"] == "code"
    ]


@dataclass
class Definition:
    """A public function, class or constant of a module, as the source spells it."""

    name: str
    kind: str  # "function", "class" or "constant"
    signature: str  # "name(args) -> result", "class Name", or "NAME = value" (shortened)
    docstring: str
    line: int
    chapters: list[str] = field(default_factory=list)  # notebook stems that call it
    exported: bool = False  # also ``helpers.<name>`` (re-exported by helpers/__init__.py)


@dataclass
class Module:
    name: str  # "attention"
    path: Path
    docstring: str
    definitions: list[Definition]
    chapters: list[str]  # notebook stems whose runs reach the module
    lines: int


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    result = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{node.name}({ast.unparse(node.args)}){result}"


def _definitions(tree: ast.Module) -> list[Definition]:
    found = []
    for node in tree.body:
        overload = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            ast.unparse(d).endswith("overload") for d in node.decorator_list
        )
        if overload:
            continue  # typing.overload: the implementation below it is the one entry
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            found.append(
                Definition(node.name, "function", _signature(node), ast.get_docstring(node) or "", node.lineno)
            )
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            bases = f"({', '.join(ast.unparse(b) for b in node.bases)})" if node.bases else ""
            doc = ast.get_docstring(node) or ""
            found.append(Definition(node.name, "class", f"class {node.name}{bases}", doc, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                typevar = isinstance(node.value, ast.Call) and ast.unparse(node.value.func).endswith("TypeVar")
                public = isinstance(target, ast.Name) and not target.id.startswith("_") and target.id.isupper()
                if public and node.value is not None and not typevar:
                    value = ast.unparse(node.value)
                    value = value if len(value) <= 60 else value[:57] + "..."
                    found.append(Definition(target.id, "constant", f"{target.id} = {value}", "", node.lineno))
    return found


def modules(root: Path = ROOT) -> list[Module]:
    """Every module of ``helpers/`` with its public definitions and the chapters that use them."""
    package = root / "helpers"
    notebooks = {path.stem: code_sources(path) for path in chapter_notebooks()}
    names_used = {
        stem: {n for source in sources for n in helpers_imports(source)} for stem, sources in notebooks.items()
    }
    from_module = {
        stem: {pair for source in sources for pair in module_imports(source)} for stem, sources in notebooks.items()
    }
    reached = {stem: helpers_reached(sources, root) for stem, sources in notebooks.items()}
    exports = exported(root)
    order = {name: i for i, name in enumerate(READING_ORDER)}
    found = []
    for path in sorted(package.glob("*.py"), key=lambda p: (order.get(p.stem, len(order)), p.stem)):
        if path.name == "__init__.py":
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        definitions = _definitions(tree)
        for definition in definitions:
            flat = definition.exported = exports.get(definition.name) == path.name
            definition.chapters = [
                stem
                for stem, used in names_used.items()
                if (flat and definition.name in used)
                or (path.stem in used and _attribute_used(notebooks[stem], path.stem, definition.name))
                or (path.stem, definition.name) in from_module[stem]
            ]
        chapters = [stem for stem in notebooks if path.name in reached[stem]]
        found.append(Module(path.stem, path, ast.get_docstring(tree) or "", definitions, chapters, source.count("\n")))
    return found


def _attribute_used(sources: list[str], module: str, name: str) -> bool:
    """Whether a notebook calls ``module.name`` (``helpers.module.name`` or, after ``from helpers
    import module``, ``module.name``)."""
    pattern = re.compile(rf"\b{re.escape(module)}\.{re.escape(name)}\b")
    return any(pattern.search(source) for source in sources)


def chapter_label(stem: str) -> str:
    """``03_softmax_saturation`` → ``3``; ``07b_advanced_questions`` → ``7b``."""
    return stem.split("_", 1)[0].lstrip("0") or "0"
