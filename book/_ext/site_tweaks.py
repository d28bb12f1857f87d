"""Small fixes to the HTML that Jupyter Book 1.x produces.

- MathJax on every page. Sphinx adds the MathJax script only to pages whose own
  body has math, but chapter titles with math appear in every page's sidebar,
  and there they would stay raw TeX.
- Plain-text titles. A title with math reaches the browser tab and the print
  header as raw TeX (``\\(1/\\sqrt{d_k}\\)``, ``1/\\sqrt{d_k}``); there it becomes ``1/√dₖ``, and
  so it does in the search index (the search page's results).
- The other language. Each page links to itself in the book's other edition: the
  English site at the root, the Chinese one under ``zh/`` (book/_templates/language-switch.html).
- No script twice. sphinx-thebe registers its inline configuration once per
  build phase, and the second copy redeclares a ``const``: a console error on
  every page.
"""

import html
import re
import sys
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.upstream import require  # noqa: E402

SUBSCRIPTS = str.maketrans("0123456789aeijkmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑᵢⱼₖₘₙₒₚᵣₛₜᵤᵥₓ")
SYMBOLS = {"sigma": "σ", "neq": "≠", "cdot": "·", "ln": "ln", "max": "max"}
TEX_TO_TEXT = [
    (re.compile(r"\\[()\[\]]|\$"), ""),
    (re.compile(r"\\sqrt\{([^{}]*)\}"), r"√\1"),
    (re.compile(r"\\operatorname\{([^{}]*)\}|\\mathrm\{([^{}]*)\}"), r"\1\2"),
    (re.compile(r"\\top\b"), "ᵀ"),
    (re.compile(r"\\(sigma|neq|cdot|ln|max)(?![A-Za-z])"), lambda m: SYMBOLS[m.group(1)]),
    (re.compile(r"\\[,;!]\s*"), " "),
]
SUBSCRIPT = re.compile(r"_\{?([0-9a-z]+)\}?")


def plain_title(title: str) -> str:
    """``Where the scale \\(1/\\sqrt{d_k}\\) sits`` → ``Where the scale 1/√dₖ sits``."""
    for pattern, replacement in TEX_TO_TEXT:
        title = pattern.sub(replacement, title)
    title = SUBSCRIPT.sub(lambda m: m.group(1).translate(SUBSCRIPTS), title)
    return title.replace("{", "").replace("}", "")


EDITIONS = {"en": ("zh", "zh-CN", "中文"), "zh_CN": ("..", "en", "English")}


MATH_SPAN = re.compile(r'<span class="math[^"]*">(.*?)</span>', re.S)
TAG = re.compile(r"<[^>]+>")


def plain_index_titles(app, pagename, templatename, context, doctree):
    """The search index's titles as plain text, as the browser tab has them: a page's title is
    the HTML of its title (``<span class="math …">\\(1/\\sqrt{d_k}\\)</span>``), which the search
    page shows as raw TeX, and a section's title its text (``1/\\sqrt{d_k}``); both become ``1/√dₖ``.

    Sphinx 7.4.7 indexes a page before it writes it (``StandaloneHTMLBuilder.write_doc_serialized``,
    sphinx/builders/html/__init__.py#L668-L673) and keeps the titles in ``IndexBuilder._titles``
    and ``._all_titles`` (sphinx/search/__init__.py#L256-L264 and #L437-L454) until it dumps the
    index after the last page; ``setup`` stops the build on another Sphinx release."""
    indexer = getattr(app.builder, "indexer", None)
    if indexer is None or pagename not in indexer._titles:
        return
    title = indexer._titles[pagename]
    if title:
        title = MATH_SPAN.sub(lambda m: html.escape(plain_title(html.unescape(m.group(1))), quote=False), title)
        indexer._titles[pagename] = TAG.sub("", title)
    indexer._all_titles[pagename] = [
        (plain_title(text) if "\\" in text or "$" in text else text, anchor)
        for text, anchor in indexer._all_titles.get(pagename, [])
    ]


def translation_link(language: str, pagename: str) -> dict[str, str]:
    """Where the same page lives in the other edition, relative to this page."""
    folder, lang, label = EDITIONS.get(language, EDITIONS["en"])
    up = "../" * pagename.count("/")
    return {"translation_url": f"{up}{folder}/{pagename}.html", "translation_lang": lang, "translation_label": label}


def tidy_page(app, pagename, templatename, context, doctree):
    for key in ("title", "pagetitle"):  # the tab title; the theme's print header
        if context.get(key):
            context[key] = plain_title(context[key])

    scripts, seen = [], set()
    for script in context.get("script_files", []):
        # an inline script comes with filename None from one phase and "" from the other
        key = (getattr(script, "filename", script) or "", tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            scripts.append(script)
    context["script_files"] = scripts


def add_translation_link(app, pagename, templatename, context, doctree):
    context.update(translation_link(app.config.language or "en", pagename))


class TranslatableExerciseTitles(SphinxTransform):
    """Exercise subtitles (sphinx-exercise) are built without a source line or raw text, and a
    post-transform later melts them into a plain title, so Sphinx's gettext builder never sees them
    and the Chinese edition would keep them in English. Give each a source and its text before the
    i18n transform (priority 20) translates it; for the gettext builder, also leave a copy of the text
    as a paragraph at the end of the document, where the catalog extraction finds it.

    sphinx-exercise 1.2.1 builds the subtitle at sphinx_exercise/directive.py#L118-L124 and melts it
    at sphinx_exercise/post_transforms.py#L105-L111; ``setup`` stops the build on another release."""

    default_priority = 10

    def apply(self, **kwargs: object) -> None:
        from sphinx_exercise.nodes import exercise_subtitle

        source = self.document["source"]
        for node in list(self.document.findall(exercise_subtitle)):
            node.source, node.line = node.source or source, node.line or 1
            node.rawsource = node.rawsource or node.astext()
            if self.app.builder.name == "gettext":
                copy = nodes.paragraph(node.rawsource, node.rawsource)
                copy.source, copy.line = source, node.line
                self.document += copy


def plain_section_names(app, env):
    """A ``{ref}`` to a section takes the section's title as plain text, where the TeX of a title
    with math (``Where the scale 1/\\sqrt{d_k} sits``) would stand raw: give references the same
    plain title the browser tab gets (``1/√dₖ``).

    Sphinx 7.4.7 stores each label as (docname, labelid, the title's text) in the std domain's
    data (sphinx/domains/std/__init__.py#L809 and #L832); Sphinx issue 8139 asks for math in
    such references. ``setup`` stops the build on another Sphinx release."""
    labels = env.get_domain("std").labels
    for name, (docname, labelid, sectname) in list(labels.items()):
        if "\\" in sectname:
            labels[name] = (docname, labelid, plain_title(sectname))


def setup(app):
    require(
        "sphinx",
        "7.4.7",
        "site_tweaks.py (plain section names in references)",
        "StandardDomain.process_doc, "
        "https://github.com/sphinx-doc/sphinx/blob/v7.4.7/sphinx/domains/std/__init__.py#L809-L832 "
        "(and https://github.com/sphinx-doc/sphinx/issues/8139)",
    )
    require(
        "sphinx",
        "7.4.7",
        "site_tweaks.py (plain titles in the search index)",
        "https://github.com/sphinx-doc/sphinx/blob/v7.4.7/sphinx/search/__init__.py#L256-L264",
    )
    exercise = "https://github.com/executablebooks/sphinx-exercise/blob/v1.2.1/sphinx_exercise/"
    require(
        "sphinx-exercise",
        "1.2.1",
        "site_tweaks.py (translatable exercise titles)",
        f"the exercise subtitle node, {exercise}directive.py#L118-L124 and {exercise}post_transforms.py#L105-L111",
    )
    app.set_html_assets_policy("always")
    app.connect("env-updated", plain_section_names)
    app.add_transform(TranslatableExerciseTitles)
    # before pydata-sphinx-theme drops header templates that render empty
    app.connect("html-page-context", add_translation_link, priority=100)
    app.connect("html-page-context", tidy_page, priority=900)
    app.connect("html-page-context", plain_index_titles)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
