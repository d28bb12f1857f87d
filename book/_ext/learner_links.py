"""The site's launch and download buttons open the learner edition (``tools/learner.py``).

sphinx-book-theme builds its Colab and Binder links from the page's own source
(``sphinx_book_theme/header_buttons/launch.py``, ``add_launch_buttons``: the repository,
``repository.branch`` and the notebook's path), and its download button offers the
source as Sphinx copied it to ``_sources/`` (``header_buttons/__init__.py``,
``add_header_buttons``). Both would give a learner the MyST notebook, which renders
raw outside the site. This extension, after the theme (its handlers run at priority 501),
points a chapter page's Colab and Binder links at its learner notebook on the repository's
``notebooks`` branch (which the publishing workflow writes from the same release), English
pages at ``en/``, Chinese ones at ``zh_CN/``, and its download button at the learner notebook
that the site itself serves, ``learner/<language>/<chapter>.ipynb`` at the site's root. The
English build writes both languages' learner notebooks there when it has finished. It also
moves the Chinese edition's ``html_baseurl`` (its canonical links) under ``zh/``.
"""

from __future__ import annotations

from pathlib import Path

from tools.learner import launch_urls, notebook_path, write
from tools.notebook_format import ROOT, chapter_notebooks

LEARNER = "learner"  # the learner notebooks' folder at the root of the site


def edition(app) -> str:
    return "zh_CN" if (app.config.language or "en").startswith("zh") else "en"


def chapter_pages() -> set[str]:
    return {str(path.relative_to(ROOT).with_suffix("")) for path in chapter_notebooks()}


def rewire_buttons(app, pagename, templatename, context, doctree):
    if pagename not in chapter_pages():
        return
    language = edition(app)
    urls = launch_urls(pagename, language)
    # the Chinese edition is the site's zh/ folder: the learner notebooks are one level up
    download = ("../" if language != "en" else "") + context["pathto"](
        f"{LEARNER}/{notebook_path(pagename, language)}", 1
    )
    rewired = set()
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []):
            if group.get("label") == "launch-buttons" and button.get("text") in urls:
                button["url"] = urls[button["text"]]
                rewired.add(button["text"])
            if button.get("label") == "download-source-button":
                button["url"] = download
                rewired.add("download")
    options = app.config.html_theme_options.get("launch_buttons", {})
    expected = {name for name, key in (("Colab", "colab_url"), ("Binder", "binderhub_url")) if options.get(key)}
    missing = sorted((expected | {"download"}) - rewired)
    if missing:
        raise RuntimeError(f"{pagename}: no {missing} button to rewire (sphinx-book-theme changed?)")


def write_learner_edition(app, exception):
    if exception is None and app.builder.format == "html" and edition(app) == "en":
        write(Path(app.outdir) / LEARNER)


def chinese_base_url(app, config):
    if config.html_baseurl and edition(app) == "zh_CN" and not config.html_baseurl.rstrip("/").endswith("/zh"):
        config.html_baseurl = config.html_baseurl.rstrip("/") + "/zh/"


def setup(app):
    app.connect("config-inited", chinese_base_url)
    app.connect("html-page-context", rewire_buttons, priority=510)  # after the theme's launch buttons (501)
    app.connect("build-finished", write_learner_edition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
