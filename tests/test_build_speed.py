"""book/_ext/build_speed.py: the two Sphinx speed-ups answer exactly what Sphinx's own code answers.

The whole effect on the site is checked by the site tests (a patched build is the site they read);
these tests pin the two pieces alone, on a small project and on the words that decide stemming.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests import extension


def build_speed() -> Any:
    return extension("build_speed")


def test_the_latin_terms_answer_membership_as_the_list_did():
    terms = build_speed()._LatinTerms()
    words = ["QK", "softmax", "QK", "d_k", "SGD"]
    terms.extend(words)
    listed: list[str] = []
    listed.extend(words)
    for word in ["QK", "qk", "SGD", "Adam", "softmax", "d_k", ""]:
        assert (word in terms) == (word in listed), word  # fails if the set forgot or invented a word


def test_the_numref_lookup_unpickles_each_target_page_once():
    module = build_speed()
    calls: list[str] = []

    class Env:
        toc_fignumbers = {"page": {"figure": {"fig-1": (3, 2)}}}

        def get_doctree(self, docname: str) -> Any:
            calls.append(docname)
            return object()

    class App:
        env = Env()

    env = module._TargetPages(App.env)
    first, second = env.get_doctree("page"), env.get_doctree("page")
    assert first is second and calls == ["page"]  # fails if each reference unpickles the page again
    assert env.toc_fignumbers == Env.toc_fignumbers  # everything else is the environment's own
    assert module._TargetPages(Env()).get_doctree("page") is not first  # fails if environments share trees
    module._forget_target_pages(App)
    env.get_doctree("page")
    assert calls == ["page", "page", "page"]  # fails if a new write phase kept the last one's trees


def test_a_small_project_numbers_its_references_as_without_the_patch(tmp_path: Path, monkeypatch):
    """The same figure and section numbers with and without build_speed, in a tiny Sphinx project."""
    from sphinx.application import Sphinx
    from sphinx.domains.std import StandardDomain
    from sphinx.search.zh import SearchChinese

    # the patch is process-wide: undone after this test, so no other test builds with it unasked
    monkeypatch.setattr(StandardDomain, "_resolve_numref_xref", StandardDomain._resolve_numref_xref)
    monkeypatch.setattr(SearchChinese, "latin_terms", SearchChinese.latin_terms)

    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text("numfig = True\nextensions = []\n", encoding="utf-8")
    (source / "index.rst").write_text("Top\n===\n\n.. toctree::\n   :numbered:\n\n   a\n   b\n", encoding="utf-8")
    (source / "a.rst").write_text(
        "A\n=\n\n.. _fig-a:\n\n.. figure:: nothing.png\n\n   A caption.\n\nSee :numref:`fig-b` and :numref:`sec-b`.\n",
        encoding="utf-8",
    )
    (source / "b.rst").write_text(
        ".. _sec-b:\n\nB\n=\n\n.. _fig-b:\n\n.. figure:: nothing.png\n\n   B caption.\n\nSee :numref:`fig-a`.\n",
        encoding="utf-8",
    )

    def build(patched: bool) -> str:
        out = tmp_path / ("patched" if patched else "plain")
        app = Sphinx(str(source), str(source), str(out), str(out / ".doctrees"), "html", status=None, warning=None)
        if patched:
            build_speed().setup(app)
        app.build()
        return (out / "a.html").read_text(encoding="utf-8") + (out / "b.html").read_text(encoding="utf-8")

    plain = build(False)
    patched = build(True)
    assert "Fig. 2.1" in plain and "Section 2" in plain  # a check of the project: numrefs resolved
    assert patched == plain
