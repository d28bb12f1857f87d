"""One term per concept in the Chinese edition, from ``locales/zh_CN/terms.yml``.

Each entry of that file names a concept in English and its one Chinese rendering. An entry with a
``match`` (a regular expression, case-insensitive, on the English message with its math, code and
role targets taken out) is a *concept*: wherever the English names it, the Chinese must contain
``use`` (a regular expression: the rendering) and none of ``avoid`` (the renderings that are wrong).
An entry may name catalogs it does not hold (``except_catalogs``: a code-printed table's cells keep
the digits of their English). An entry without ``match`` is a rule of form: none of its ``avoid``
patterns may appear in any Chinese message. The Chinese is read with its math and code spans taken out, so an identifier
(``buggy_attention_a``) or a symbol is never a term.

    python -m tools.terms            # every message of every catalog that breaks an entry

tests/test_terms.py runs :func:`violations` over every catalog.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tools.notebook_format import ROOT

TERMS = ROOT / "locales" / "zh_CN" / "terms.yml"
MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$", re.S)
CODE = re.compile(r"``?[^`\n]+``?")
ROLE = re.compile(r"\{[\w:-]+\}`([^`]*)`")
QUOTE = re.compile(r"「[^」]*」")


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str
    match: re.Pattern[str] | None
    use: re.Pattern[str] | None
    avoid: tuple[re.Pattern[str], ...] = field(default_factory=tuple)
    except_catalogs: tuple[str, ...] = ()
    glossary: str | None = None


def load(path: Path = TERMS) -> list[Term]:
    """The entries of terms.yml, their patterns compiled."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["terms"]
    return [
        Term(
            english=e["english"],
            chinese=e["chinese"],
            match=re.compile(e["match"], re.I) if e.get("match") else None,
            use=re.compile(e["use"]) if e.get("use") else None,
            avoid=tuple(re.compile(a) for a in e.get("avoid", [])),
            except_catalogs=tuple(e.get("except_catalogs", [])),
            glossary=e.get("glossary"),
        )
        for e in entries
    ]


def english_text(message: str) -> str:
    """What a reader reads of an English message: a role's visible text (glue names dropped), no math or code."""

    def visible(match: re.Match[str]) -> str:
        if match.group(0).startswith("{glue") or match.group(0).startswith("{eq}"):
            return " "
        return re.sub(r"\s*<[^<>]*>\s*$", "", match.group(1))

    return CODE.sub(" ", MATH.sub(" ", ROLE.sub(visible, message)))


def chinese_text(message: str) -> str:
    """A translation without its math, code, and role targets (a glue name, a label, a file name)."""

    def visible(match: re.Match[str]) -> str:
        if match.group(0).startswith("{glue") or match.group(0).startswith("{eq}"):
            return " "
        return re.sub(r"\s*<[^<>]*>\s*$", "", match.group(1))

    # the article quoted in its own words (「…」) is the blogger's vocabulary, not the book's
    return QUOTE.sub(" ", CODE.sub(" ", MATH.sub(" ", ROLE.sub(visible, message))))


def violations(english: str, chinese: str, terms: list[Term]) -> list[str]:
    """How one translated message breaks the term list: a variant used, or a concept's rendering missing."""
    source, target = english_text(english), chinese_text(chinese)
    found = []
    for term in terms:
        if term.match is not None and not term.match.search(source):
            continue
        for pattern in term.avoid:
            if hit := pattern.search(target):
                found.append(f"{term.english!r}: {hit.group(0)!r} where the book writes {term.chinese}")
        if term.match is not None and term.use is not None and not term.use.search(target):
            found.append(f"{term.english!r}: no {term.use.pattern!r} ({term.chinese})")
    return found


def catalog_violations(terms: list[Term] | None = None) -> list[str]:
    """Every translated message of every catalog that breaks an entry, but the article's own sentences
    (原文, quoted verbatim: its words are not the book's) and messages kept in English on purpose."""
    from tools import claims
    from tools.locale import CATALOGS, catalog

    terms = load() if terms is None else terms
    quotes = claims.derived_messages(claims.load_ledger())
    found = []
    for po in sorted(CATALOGS.rglob("*.po")):
        name = str(po.relative_to(CATALOGS).with_suffix(""))
        for message in catalog(name):
            if not message.id or not message.string or message.string == message.id or message.id in quotes:
                continue
            applicable = [t for t in terms if name not in t.except_catalogs]
            english, chinese = str(message.id), str(message.string)
            found += [f"{name}: {v}\n    {chinese[:120]!r}" for v in violations(english, chinese, applicable)]
    return found


def main() -> int:
    found = catalog_violations()
    print("\n".join(found))
    print(f"{len(found)} term violations", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
