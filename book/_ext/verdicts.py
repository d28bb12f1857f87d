"""The ``{verdict}`` role: a claim's grade as a styled label, in either edition.

``{verdict}`half right <half-right>``` renders the visible text ``half right`` as
``<span class="verdict verdict-half-right">``; the part in angle brackets is the grade's
slug, the same in both editions, so the Chinese catalog keeps the role and translates
its text (``{verdict}`对了一半 <half-right>```). ``tools/claims.py`` writes these roles
(the ledger's table and entries) and fills their Chinese form; the site's stylesheet
colours the classes ``verdict`` and ``verdict-<slug>``.
"""

from __future__ import annotations

import re

from docutils import nodes
from docutils.utils import unescape

SLUGS = ("confirmed", "half-right", "corrected", "not-tested")
ROLE_TEXT = re.compile(r"^(?P<text>.+?)\s*<(?P<slug>[a-z-]+)>$", re.S)


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    match = ROLE_TEXT.match(unescape(text))
    if not match or match.group("slug") not in SLUGS:
        message = inliner.reporter.error(
            f"{{verdict}} needs 'text <slug>' with a slug among {SLUGS}: {text!r}", line=lineno
        )
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    label = match.group("text")
    return [nodes.inline(rawtext, label, classes=["verdict", f"verdict-{match.group('slug')}"])], []


def setup(app):
    app.add_role("verdict", verdict_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
