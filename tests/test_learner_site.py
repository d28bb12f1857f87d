"""The built site sends learners to the learner edition, and numbers things as the edition does.

- Each chapter page's Colab and Binder buttons open its learner notebook on the ``notebooks``
  branch, in the page's language (book/_ext/learner_links.py), and its download button gives that
  notebook as the site serves it (``learner/<language>/``, written by the English build).
- The setup cell is not on the page (remove-cell): the first code a reader sees is the chapter's.
- The numbers the learner edition writes (sections, figures, equations, theorems, exercises) are
  those the site shows: tools/learner.py numbers as Sphinx does, and this checks it on every page.
"""

from __future__ import annotations

import re
from html import unescape

import pytest

from tools import learner
from tools.notebook_format import ROOT, chapter_notebooks, read

LEARNER = "learner"  # the site's folder of learner notebooks (book/_ext/learner_links.py)

PAGES = [str(path.relative_to(ROOT).with_suffix("")) for path in chapter_notebooks()]
EDITIONS = {"en": "", "zh_CN": "zh/"}
CASES = [
    pytest.param(page, language, id=f"{language}-{page.split('/')[-1]}") for language in EDITIONS for page in PAGES
]


def page_html(built_site, page: str, language: str) -> str:
    return (built_site / f"{EDITIONS[language]}{page}.html").read_text(encoding="utf-8")


def learner_notebook(built_site, page: str, language: str):
    return read(built_site / LEARNER / learner.notebook_path(page, language))


@pytest.mark.parametrize(("page", "language"), CASES)
def test_launch_and_download_buttons_open_the_learner_edition(built_site, page, language):
    html = page_html(built_site, page, language)
    links = {unescape(href) for href in re.findall(r'href="([^"]+)"', html)}
    for name, url in learner.launch_urls(page, language).items():
        assert url in links, f"no {name} link to {url}"
        assert f"/{learner.NOTEBOOKS_BRANCH}/" in url or f"/{learner.NOTEBOOKS_BRANCH}?" in url
    assert not any("/blob/main/" in link or "/main?urlpath" in link for link in links), (
        "a launch link at the sources' branch"
    )
    page_folder = (built_site / EDITIONS[language] / page).parent
    downloads = [link for link in links if link.endswith(".ipynb") and "://" not in link]
    assert len(downloads) == 1, downloads
    target = (page_folder / downloads[0]).resolve()
    assert target == (built_site / LEARNER / learner.notebook_path(page, language)).resolve() and target.is_file()


@pytest.mark.parametrize(("page", "language"), CASES)
def test_the_site_hides_the_setup_cell(built_site, page, language):
    html = page_html(built_site, page, language)
    assert "PackageNotFoundError" not in html and "%pip install" not in html


NUMBER = r"(\d+[a-z]?(?:\.\d+)*)"  # 3.2.1, or 7b.2 in a companion chapter (book/_ext/chapter_numbers.py)


def site_numbers(html: str) -> list[str]:
    found = re.findall(r'<h\d[^>]*><span class="section-number">(\d+[a-z]?(?:\.\d+)*)\.? </span>', html)
    found += [f"caption {n}" for n in re.findall(rf'<span class="caption-number">\S+ {NUMBER} ?</span>', html)]
    found += [f"equation {n}" for n in re.findall(rf'<span class="eqno">\({NUMBER}\)', html)]
    return sorted(found)


def learner_numbers(built_site, page: str, language: str) -> list[str]:
    notebook = learner_notebook(built_site, page, language)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    number = NUMBER
    found = re.findall(rf"^#+ {number}\. ", markdown, re.M)
    found += [f"caption {n}" for n in re.findall(rf"^\*\*\S+ {number}\.?\*\* \S", markdown, re.M)]  # figures
    # theorems and exercises, with or without a title
    found += [f"caption {n}" for n in re.findall(rf"^(?:> )?\*\*\S+ {number}(?:[ （(][^*]*)?\*\*$", markdown, re.M)]
    found += [f"equation {n}" for n in re.findall(rf"\\tag\{{{number}\}}", markdown)]
    return sorted(found)


@pytest.mark.parametrize(("page", "language"), CASES)
def test_the_learner_edition_numbers_as_the_site_does(built_site, page, language):
    assert learner_numbers(built_site, page, language) == site_numbers(page_html(built_site, page, language))


@pytest.mark.parametrize(("page", "language"), CASES)
def test_citations_read_as_on_the_site(built_site, page, language):
    html = page_html(built_site, page, language)
    cited = set()
    for span in re.findall(r'<span class="bibtex-citation"[^>]*>(.*?)</span>', html, re.S):
        cited |= {re.sub(r"<[^>]+>", "", text).strip() for text in re.findall(r"<a [^>]*>(.*?)</a>", span, re.S)}
    markdown = "\n".join(c.source for c in learner_notebook(built_site, page, language).cells)
    shown = set(
        re.findall(r"\[([^\[\]]+)\]\(" + re.escape(learner.site_url(language)) + r"book/bibliography\.html\)", markdown)
    )
    assert shown == cited
