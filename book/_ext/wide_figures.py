"""Multi-panel figures side by side on a desktop, stacked on a phone.

A notebook draws a multi-panel figure twice from the same arrays (CONTRIBUTING.md, "How a page reads"): the cell
shows the phone layout (panels stacked), and a ``remove-cell`` glues the desktop and slide layout
as ``<figure name with - replaced by _>_wide`` (``fig-whole-chain`` → ``fig_whole_chain_wide``).
The landing page shows glued figures from ``_generated/<name>.png``; there the wide one is
``<name>_wide``. Where a wide version is glued, the HTML page gets

    <picture class="wide-figure">
      <source media="(min-width: WIDE_FROM)" srcset="…/wide.png">
      <img src="…/stacked.png" alt="…">          (the figure's own image, alt text and caption)
    </picture>

so the browser loads one of the two: the wide one where it can be shown with its smallest text
(13 pt at 110 dpi, 19.9 px natural) at 12 px or more (tests/test_site_layout.py measures it), the
stacked one below that, and without ``<picture>`` support. The figure gets the class ``wide-full``:
where the page has its right-hand contents column (from 1200 px), book.css lets the wide figure take
that column's width too, and site.js folds the contents away while such a figure is in view (as
sphinx-book-theme does for its own full-width content, whose class its script would look for a contents
column with on every page, the landing page too, which has none).
Every other figure image is shown at its natural size, never shrunk (book.css, site.js: it scrolls
sideways in a box of its own where the column is narrower, as on a phone). The slide decks always show
the wide one (book/_ext/book_slides.py).
Other builders (gettext, text) keep the figure as it is. The wide PNGs come from the committed
outputs, written to ``book/_generated/`` by glued_figures.py.
"""

from __future__ import annotations

import posixpath
import re
import sys
import urllib.parse
from pathlib import Path

from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.notebook_format import ROOT, chapter_notebooks, glued_outputs, read  # noqa: E402

GENERATED = "book/_generated"
SUFFIX = "_wide"
# From this viewport width (1056 px) the article column is at least 765 px wide, and from 1200 px the
# figure also takes the contents column (book.css): the 1220-px wide figures keep their smallest text
# (19.9 px natural) at 12 px or more (tests/test_site_layout.py). Below it the stacked figure is shown
# at its natural size. book.css repeats this width in its media queries.
WIDE_FROM = "66em"
PICTURE = re.compile(r'<picture class="wide-figure" data-wide="([^"]+)">\s*<source[^>]*>\s*(<img\b[^>]*?)\bsrc="[^"]*"')


class wide_picture(nodes.General, nodes.Element):  # noqa: N801  (docutils names nodes in lower case)
    """Wraps a figure's image; ``wide`` is the srcdir-relative path of its wide version."""


def glued_figures(app) -> None:
    """notebook docname -> the names of the figures it glues, from the committed outputs."""
    app.env.wide_figure_names = {  # type: ignore[attr-defined]
        f"notebooks/{path.stem}": {g.name for g in glued_outputs(read(path)) if g.is_figure}
        for path in chapter_notebooks()
    }


def wide_version(app, docname: str, figure: nodes.figure, image: nodes.image) -> str | None:
    names: dict[str, set[str]] = app.env.wide_figure_names
    everywhere = set().union(*names.values()) if names else set()
    uri = image.get("uri", "")
    if uri.startswith(f"{GENERATED}/") and uri.endswith(".png"):
        base = uri[len(GENERATED) + 1 : -len(".png")]
        if base + SUFFIX in everywhere:
            return f"{GENERATED}/{base}{SUFFIX}.png"
    for name in figure.get("ids", []) + figure.get("names", []):
        base = name.replace("-", "_")
        if base.startswith("fig_") and base + SUFFIX in names.get(docname, ()):
            return f"{GENERATED}/{base}{SUFFIX}.png"
    return None


def wrap_wide_figures(app, doctree, docname) -> None:
    if app.builder.format != "html":
        return
    for figure in list(doctree.findall(nodes.figure)):
        images = list(figure.findall(nodes.image))
        if len(images) != 1 or isinstance(images[0].parent, wide_picture):
            continue
        wide = wide_version(app, docname, figure, images[0])
        if wide is None or not (ROOT / wide).is_file():
            continue
        # Sphinx copies every file in builder.images to _images/ once the pages are written
        app.builder.images[wide] = f"wide_{Path(wide).name}"
        picture = wide_picture(wide=wide)
        figure["classes"].append("wide-full")  # book.css; site.js folds the contents column away beside it
        images[0].replace_self(picture)
        picture += images[0]


def visit_html(translator, node: wide_picture) -> None:
    source = posixpath.join(translator.builder.imgpath, urllib.parse.quote(translator.builder.images[node["wide"]]))
    translator.body.append(
        f'<picture class="wide-figure" data-wide="{source}"><source media="(min-width: {WIDE_FROM})" srcset="{source}">'
    )


def depart_html(translator, node: wide_picture) -> None:
    translator.body.append("</picture>")


def wide_only(fragment: str) -> str:
    """The same HTML with every wide figure as its wide image alone (for the slide decks)."""
    fragment = PICTURE.sub(lambda m: f'{m.group(2)}src="{m.group(1)}"', fragment)
    return fragment.replace("</picture>", "")


def setup(app):
    app.add_node(wide_picture, html=(visit_html, depart_html))
    app.connect("builder-inited", glued_figures)
    app.connect("doctree-resolved", wrap_wide_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
