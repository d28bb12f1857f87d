"""Export notebooks to reveal.js slides that work offline.

    python tools/build_slides.py OUTPUT_DIR NOTEBOOK...

Each chapter becomes OUTPUT_DIR/<name>.slides.html, laid out by the cells'
``slideshow`` metadata (see tools/slides.py), with the book's template
(book/_slides) and vendored reveal.js and MathJax copied beside it.

Slides are rendered by nbconvert, which knows plain Markdown but not MyST, so
each notebook is first rewritten for the slides: glued values are pasted in,
roles become their text, admonitions and exercises become bold headings, and
solutions are left out (they stay in the book).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
VENDORED = {
    "reveal.js": ROOT / "book" / "_vendor_slides" / "reveal.js",
    "mathjax": ROOT / "book" / "_vendor" / "mathjax",
}
GLUE_TEXT = "application/papermill.record/text/plain"


def glued_values(notebook: nbformat.NotebookNode) -> dict[str, str]:
    values = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and GLUE_TEXT in output.get("data", {}):
                values[name] = output["data"][GLUE_TEXT]
    return values


def paste_glue(match: re.Match, values: dict[str, str]) -> str:
    key, _, spec = match.group(1).partition(":")
    text = values.get(key, key)
    try:
        return format(float(text), spec) if spec and spec != "s" else text
    except ValueError:
        return text


DIRECTIVE_TITLES = {"exercise": "Exercise", "prf:theorem": "Theorem", "prf:lemma": "Lemma", "prf:proof": "Proof",
                    "prf:definition": "Definition", "note": "Note", "tip": "Tip", "warning": "Warning", "admonition": ""}


def directive_heading(match: re.Match) -> str:
    label = DIRECTIVE_TITLES.get(match.group(3), match.group(3).split(":")[-1].capitalize())
    title = match.group(4).strip()
    return f"**{label}{': ' if label and title else ''}{title}**" if (label or title) else ""


FENCE = re.compile(r"^(:{3,}|`{3,})(\{([\w:-]+)\})?(.*)$")


def myst_to_markdown(source: str, values: dict[str, str]) -> str:
    source = re.sub(r"(`{3,4})\{solution\}.*?\n\1\s*$", "", source, flags=re.S | re.M)
    source = re.sub(r"\{glue:text\}`([^`]+)`", lambda m: paste_glue(m, values), source)
    source = re.sub(r"\{eq\}`([^`]+)`", r"(\1)", source)
    source = re.sub(r"\{cite\}`([^`]+)`", r"[\1]", source)
    source = re.sub(r"\{[\w:-]+\}`([^`<]+?)\s*(?:<[^`]*>)?`", r"\1", source)  # {term}, {doc}, {ref}, {prf:ref}
    lines, open_fences = [], []  # open_fences: (fence, is_directive)
    for line in source.splitlines():
        match = FENCE.match(line)
        if open_fences and open_fences[-1][1] and re.match(r"^:[\w-]+:", line):
            continue  # a directive's option (:label:, :class:)
        if match and open_fences and line.strip() == open_fences[-1][0]:
            fence, is_directive = open_fences.pop()
            if not is_directive:
                lines.append(line)
        elif match and match.group(2):  # a MyST directive opens: its title becomes a bold line
            open_fences.append((match.group(1), True))
            lines.append(directive_heading(match))
        elif match and match.group(1).startswith("`") and not (open_fences and not open_fences[-1][1]):
            open_fences.append((match.group(1), False))  # an ordinary code block opens
            lines.append(line)
        else:
            lines.append(line)
    source = "\n".join(lines)
    return re.sub(r"^(\$\$.*?\$\$)\s*\([\w-]+\)\s*$", r"\1", source, flags=re.M | re.S)


def main() -> int:
    output, notebooks = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    output.mkdir(parents=True, exist_ok=True)
    for name, source in VENDORED.items():
        if not source.is_dir():
            sys.exit(f"build_slides: {source} is missing; run tools/fetch_vendor.sh")
        shutil.rmtree(output / name, ignore_errors=True)
        shutil.copytree(source, output / name)
    with tempfile.TemporaryDirectory() as work:
        rewritten = []
        for path in notebooks:
            notebook = nbformat.read(path, as_version=4)
            values = glued_values(notebook)
            cells = []
            for cell in notebook.cells:
                if cell.cell_type != "markdown":
                    cells.append(cell)
                    continue
                # a cell that holds several sections becomes one slide per section
                parts = re.split(r"^(?=## )", myst_to_markdown(cell.source, values), flags=re.M)
                for index, part in enumerate(p for p in parts if p.strip()):
                    piece = nbformat.v4.new_markdown_cell(part, metadata=dict(cell.metadata))
                    if index > 0:
                        piece.metadata["slideshow"] = {"slide_type": "slide"}
                    cells.append(piece)
            notebook.cells = cells
            rewritten.append(Path(work) / path.name)
            nbformat.write(notebook, rewritten[-1])
        command = [
            sys.executable, "-m", "jupyter", "nbconvert", "--to", "slides", "--output-dir", str(output),
            f"--SlidesExporter.template_file={ROOT / 'book' / '_slides' / 'book_slides.html.j2'}",
            "--SlidesExporter.reveal_url_prefix=reveal.js",
            "--SlidesExporter.reveal_theme=white", *map(str, rewritten),
        ]
        return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
