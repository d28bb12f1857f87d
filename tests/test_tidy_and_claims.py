"""What `make tidy` derives is in step, and the claims ledger is complete and used.

The ledger (``book/claims.yml``) is the one place a verdict on the source
article is written; the chapters' verdict boxes and ``book/claims.md`` come
from it.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tools.notebook_format import ROOT, chapter_notebooks, read
from tools.tidy import FIELDS, VERDICTS, load_ledger

CLAIM_ID = re.compile(r"\bC([1-7])\.(\d+)\b")
ARTICLE_CLAIMS = {"1": 5, "2": 3, "3": 4, "4": 3, "5": 4, "6": 2, "7": 7}


def test_tidy_has_nothing_to_do():
    result = subprocess.run([sys.executable, "-m", "tools.tidy", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"run `make tidy`:\n{result.stdout}"


def test_the_ledger_holds_every_claim_of_the_article_complete():
    ledger = load_ledger()
    expected = {f"C{section}.{n}" for section, count in ARTICLE_CLAIMS.items() for n in range(1, count + 1)}
    assert set(ledger) == expected
    for claim_id, entry in ledger.items():
        assert set(entry) == set(FIELDS), (claim_id, sorted(entry))
        assert all(isinstance(entry[f], str) and entry[f].strip() and "TODO" not in entry[f] for f in FIELDS), claim_id
        assert entry["verdict"] in VERDICTS, (claim_id, entry["verdict"])
        assert (ROOT / "notebooks" / f"{entry['chapter']}.ipynb").is_file(), (claim_id, entry["chapter"])


def test_every_claim_is_tested_where_the_ledger_says():
    ledger = load_ledger()
    for claim_id, entry in ledger.items():
        notebook = read(ROOT / "notebooks" / f"{entry['chapter']}.ipynb")
        boxes = [c for c in notebook.cells if claim_id in c.metadata.get("claims", [])]
        assert len(boxes) == 1, f"{claim_id}: {len(boxes)} verdict boxes in {entry['chapter']}"
        labels = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        assert f"({entry['section']})=" in labels, f"{claim_id}: no label ({entry['section']})= in {entry['chapter']}"
        # the reason glues its number from the chapter that tests the claim
        assert "{glue" in entry["reason"] or "{cite" in entry["reason"], (
            f"{claim_id}: a reason without a number or a source"
        )


def test_every_claim_id_in_the_book_is_in_the_ledger():
    ledger = load_ledger()
    for path in chapter_notebooks():
        for cell in read(path).cells:
            if cell.cell_type == "markdown":
                for match in CLAIM_ID.finditer(cell.source):
                    assert match.group(0) in ledger, f"{path.name}: {match.group(0)} is not in book/claims.yml"
