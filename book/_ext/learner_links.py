"""The site's launch and download buttons open the learner edition (``tools/learner.py``).

sphinx-book-theme builds its Colab and Binder links from the page's own source
(``sphinx_book_theme/header_buttons/launch.py``, ``add_launch_buttons``: the repository,
``repository.branch`` and the notebook's path), and its download button offers the
source as Sphinx copied it to ``_sources/`` (``header_buttons/__init__.py``,
``add_header_buttons``). Both would give a learner the MyST notebook, which renders
raw outside the site, at a moving branch. This extension, after the theme (its
handlers run at priority 501), points the Colab and Binder links of a chapter page at
its learner notebook at the release (``repository.release``), English pages at
``learner/en``, Chinese ones at ``learner/zh_CN``; and when the build has finished it
puts the learner notebook where the download button points. It also moves the
Chinese edition's ``html_baseurl`` (its canonical links) under ``zh/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.learner import launch_urls, learner_path
from tools.notebook_format import ROOT, chapter_notebooks


def edition(app) -> str:
    return "zh_CN" if (app.config.language or "en").startswith("zh") else "en"


def chapter_pages() -> set[str]:
    return {str(path.relative_to(ROOT).with_suffix("")) for path in chapter_notebooks()}


def rewire_buttons(app, pagename, templatename, context, doctree):
    if pagename not in chapter_pages():
        return
    urls = launch_urls(pagename, edition(app))
    rewired = set()
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []):
            if group.get("label") == "launch-buttons" and button.get("text") in urls:
                button["url"] = urls[button["text"]]
                rewired.add(button["text"])
    options = app.config.html_theme_options.get("launch_buttons", {})
    expected = {name for name, key in (("Colab", "colab_url"), ("Binder", "binderhub_url")) if options.get(key)}
    if expected - rewired:
        raise RuntimeError(
            f"{pagename}: no {sorted(expected - rewired)} launch button to rewire (sphinx-book-theme changed?)"
        )


def ship_learner_notebooks(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    sources = Path(app.outdir) / "_sources"
    for page in chapter_pages():
        target = sources / f"{page}.ipynb"
        if target.parent.is_dir():
            shutil.copyfile(ROOT / learner_path(page, edition(app)), target)


def chinese_base_url(app, config):
    if config.html_baseurl and edition(app) == "zh_CN" and not config.html_baseurl.rstrip("/").endswith("/zh"):
        config.html_baseurl = config.html_baseurl.rstrip("/") + "/zh/"


def setup(app):
    app.connect("config-inited", chinese_base_url)
    app.connect("html-page-context", rewire_buttons, priority=510)  # after the theme's launch buttons (501)
    app.connect("build-finished", ship_learner_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
