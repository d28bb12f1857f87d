"""A companion chapter keeps the number its file name gives it: 7b, not 7.7.

``notebooks/07b_advanced_questions`` goes on from chapter 7, so ``_toc.yml`` lists it among
chapter 7's sections (``sections:``), and Sphinx numbers it like one of chapter 7's headings:
"7.7" in the sidebar, §7.7.3 in a cross-reference, Figure 7.9 for its first figure. The book
calls it chapter 7b everywhere (its title, the prose, ``tools.helpers_index.chapter_label``), and
a chapter listed after it is chapter 8. After Sphinx has numbered the book, every page nested
under a chapter whose file name carries a letter (``07b_…`` → ``7b``) takes that label as its
number: its headings 7b, 7b.1, …, its figures, tables, equations and exercises 7b.1, 7b.2, …
(each kind counted on its own, in the order Sphinx counted them). Both editions build with it.

Upstream, at the checked release (``setup`` stops the build on any other): Sphinx 7.4.7,
sphinx/environment/collectors/toctree.py, ``TocTreeCollector.get_updated_docs`` (the
``env-get-updated`` listener, priority 500) writes ``env.toc_secnumbers``, the ``secnumber`` of
each reference in ``env.tocs`` and of each title in ``env.titles`` (#L180-L259), and
``env.toc_fignumbers`` (#L261-L340); the HTML writer joins a number's parts with ``.``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.helpers_index import chapter_label  # noqa: E402
from tools.upstream import require  # noqa: E402

LETTERED = re.compile(r"^\d+[a-z]$")  # a label such as 7b (a chapter's companion), not 7


def relabelled(number: tuple[Any, ...], prefix: tuple[Any, ...], label: str) -> tuple[Any, ...]:
    """``(7, 7, 3)`` under the page number ``(7, 7)`` → ``("7b", 3)``; any other number as it was."""
    if len(number) >= len(prefix) and tuple(number[: len(prefix)]) == prefix:
        return (label, *number[len(prefix) :])
    return tuple(number)


def companion_numbers(app: Any, env: Any) -> list[str]:
    """Relabel each lettered page nested in a numbered chapter; return the pages to rewrite."""
    changed = []
    for docname, secnumbers in list(env.toc_secnumbers.items()):
        label = chapter_label(Path(docname).name)
        prefix = tuple(secnumbers.get("", ()))
        if not LETTERED.match(label) or len(prefix) < 2:
            continue  # a chapter of its own, or a page outside the numbered part
        env.toc_secnumbers[docname] = {anchor: relabelled(n, prefix, label) for anchor, n in secnumbers.items()}
        for reference in env.tocs[docname].findall(nodes.reference):
            if reference.get("secnumber"):
                reference["secnumber"] = list(relabelled(tuple(reference["secnumber"]), prefix, label))
        title = env.titles.get(docname)
        if title is not None and title.get("secnumber"):
            title["secnumber"] = list(relabelled(tuple(title["secnumber"]), prefix, label))
        # figures, tables, equations and exercises: numbered within the chapter (numfig_secnum_depth 1),
        # so they went on from chapter 7's; each kind starts again at 1 under 7b
        for numbers in env.toc_fignumbers.get(docname, {}).values():
            order = sorted(numbers, key=lambda figure_id: tuple(numbers[figure_id]))
            for count, figure_id in enumerate(order, start=1):
                numbers[figure_id] = (label, count)
        changed.append(docname)
    return changed


def setup(app: Any) -> dict[str, Any]:
    require(
        "sphinx",
        "7.4.7",
        "chapter_numbers.py (7b's number)",
        "sphinx/environment/collectors/toctree.py, TocTreeCollector.assign_section_numbers and "
        "assign_figure_numbers (env.toc_secnumbers, env.tocs, env.titles, env.toc_fignumbers)",
    )
    app.connect("env-get-updated", companion_numbers, priority=900)  # after the toctree collector (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
