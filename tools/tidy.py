"""Keep what is derived from a rule or from one source in step with it.

    python -m tools.tidy          # rewrite what is stale (make tidy)
    python -m tools.tidy --check  # exit 1 and list what is stale (make test runs this)

What it writes, never touching outputs:

- **Slide types** of every cell, by one rule (``slides.py``).
- **Folds**: every *plumbing* cell (it only asserts or glues, see
  ``notebook_format.is_plumbing``) carries ``hide-input`` unless it already
  carries one of ``notebook_format.FOLD_TAGS``.
- **Verdict boxes**: a markdown cell whose metadata is ``{"claims": ["C3.2", ...]}``
  holds the verdict box of those claims, written from ``book/claims.yml``.
- **The claims ledger page** ``book/claims.md``, and the claim counts of the landing page
  ``book/index.md`` (between its ``claims-counts`` markers), from the same file.

The claims part (reading, the rubric, rendering) lives in ``tools/claims.py``.

What changes is metadata or markdown: no re-execution needed. (The learner edition and its
setup cell are build products: ``tools/learner.py``.)
"""

from __future__ import annotations

import argparse
import sys

import nbformat

from tools import claims
from tools.notebook_format import FOLD_TAGS, ROOT, chapter_notebooks, is_plumbing, read, tags
from tools.slides import set_slide_types


def tidy_notebook(notebook: nbformat.NotebookNode, ledger: dict[str, claims.Entry]) -> list[str]:
    """Bring one notebook in step, in memory; return what changed."""
    changes = []
    if set_slide_types(notebook):
        changes.append("slide types set")
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and is_plumbing(cell.source) and not set(tags(cell)) & set(FOLD_TAGS):
            cell.metadata.setdefault("tags", []).append("hide-input")
            changes.append(f"cell {index}: folded (hide-input)")
        claim_ids = cell.metadata.get("claims")
        if cell.cell_type == "markdown" and claim_ids:
            source = "\n\n".join(claims.verdict_box(cid, ledger[cid]) for cid in claim_ids if cid in ledger)
            if source != cell.source:
                cell.source = source
                changes.append(f"cell {index}: verdict box for {', '.join(claim_ids)}")
    return changes


class LedgerConflict(ValueError):
    """The ledger grades the same evidence two ways: nothing can be rendered from it until it is fixed."""


def run(write: bool) -> list[str]:
    """Everything that is out of step, as lines; with ``write``, bring it in step as well.
    The tests call this in-process (``write=False``), ``tidy --check`` from the command line.

    Raises:
        LedgerConflict: where ``book/claims.yml`` grades the same evidence two ways (the lines say where).
    """
    ledger = claims.load_ledger()
    problems = claims.check_same_evidence(ledger)
    if problems:
        raise LedgerConflict("\n".join(["book/claims.yml: the same evidence graded two ways:", *problems]))
    stale = []
    for path in chapter_notebooks():
        notebook = read(path)
        changes = tidy_notebook(notebook, ledger)
        if changes and write:
            nbformat.write(notebook, path)
        stale += [f"{path.name}: {change}" for change in changes]
    landing = claims.LANDING_PAGE.read_text(encoding="utf-8")
    for page, text in (
        (claims.LEDGER_PAGE, claims.ledger_page(ledger)),
        (claims.LANDING_PAGE, claims.with_landing_counts(landing, ledger)),
    ):
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            stale.append(f"{page.relative_to(ROOT)}: regenerated from {claims.LEDGER.relative_to(ROOT)}")
            if write:
                page.write_text(text, encoding="utf-8")
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is stale")
    args = parser.parse_args()
    try:
        stale = run(write=not args.check)
    except LedgerConflict as conflict:
        print(conflict)
        return 1
    print("\n".join(stale) if stale else "tidy: nothing to do")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
