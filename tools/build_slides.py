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


def myst_to_markdown(source: str, values: dict[str, str]) -> str:
    source = re.sub(r"(`{3,4})\{solution\}.*?\n\1\s*$", "", source, flags=re.S | re.M)
    source = re.sub(r"\{glue:text\}`([^`]+)`", lambda m: paste_glue(m, values), source)
    source = re.sub(r"\{(?:term|doc)\}`([^`<]+?)\s*(?:<[^`]*>)?`", r"\1", source)
    source = re.sub(r"\{eq\}`([^`]+)`", r"(\1)", source)
    source = re.sub(r"\{cite\}`([^`]+)`", r"[\1]", source)
    source = re.sub(r"^(?::::?|`{3,4})\{(?:admonition|exercise)\}\s*(.*)$", r"**\1**", source, flags=re.M)
    source = re.sub(r"^:(?:class|label|name):.*\n", "", source, flags=re.M)
    source = re.sub(r"^(?::::?|`{3,4})\s*$", "", source, flags=re.M)
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
            for cell in notebook.cells:
                if cell.cell_type == "markdown":
                    cell.source = myst_to_markdown(cell.source, values)
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
