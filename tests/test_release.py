"""The release (tools/release.py): every link a reader, a learner or a teacher follows from it resolves to a
file that the same release publishes, and nothing points at a tag or a file it does not produce.

- On the built site (both editions): the release assembled from it (the landing page photographed in
  Chromium for the README), then every Colab and Binder button,
  download link, PDF link and install URL walked (:func:`tools.release.check_links`).
- On a small made-up release: the walk finds a launch link at a tag, a missing notebook, a missing PDF,
  a learner notebook's link to a file the site does not hold, and the README's missing picture.
"""

from __future__ import annotations

import nbformat

from tools import learner, release


def test_every_link_of_the_release_resolves_inside_it(built_site, browser, tmp_path):
    problems = release.assemble(built_site, tmp_path, browser)
    assert not problems, "\n".join(problems[:20])
    count, problems = release.check_links(tmp_path)
    chapters = len(list((tmp_path / "notebooks" / "en").glob("*.ipynb")))
    # per chapter and edition: Colab, Binder (and its environment), download; every learner notebook's setup cell
    assert count >= chapters * 2 * 4 + chapters * 4
    print(f"{count} links of the release resolve inside it")
    assert (tmp_path / "site" / "dist" / learner.wheel_name()).is_file()


def page(links: list[str]) -> str:
    return "<html><body>" + "".join(f'<a href="{link}">x</a>' for link in links) + "</body></html>"


def test_the_walk_finds_what_does_not_resolve(tmp_path):
    site, notebooks = tmp_path / "site", tmp_path / "notebooks"
    (site / "notebooks").mkdir(parents=True)
    (site / "dist").mkdir()
    (site / "dist" / learner.wheel_name()).write_bytes(b"wheel")
    (notebooks / "en").mkdir(parents=True)
    (notebooks / "binder").mkdir()
    (notebooks / "binder" / "requirements.txt").write_text(f"{learner.DISTRIBUTION} @ {learner.wheel_url()}\n")
    setup = learner.setup_cell("en")
    offered = nbformat.v4.new_markdown_cell(f"[in slide layout]({learner.site_url()}_downloads/0a/fig_a_wide.png)")
    nbformat.write(nbformat.v4.new_notebook(cells=[offered, setup]), notebooks / "en" / "01_a.ipynb")
    urls = learner.launch_urls("notebooks/01_a", "en")
    good = [urls["Colab"], urls["Binder"]]
    at_a_tag = urls["Colab"].replace(f"/blob/{learner.NOTEBOOKS_BRANCH}/", "/blob/v0.1.0/")
    missing = urls["Binder"].replace("01_a", "02_b")
    (site / "notebooks" / "01_a.html").write_text(page([*good, at_a_tag, missing, "../lecture/quiz.pdf"]))
    readme = tmp_path / "README.md"
    readme.write_text(f"![the landing page]({learner.site_url()}{release.SCREENSHOT})\n")
    count, problems = release.check_links(tmp_path, readme)
    # the two good buttons and Binder's environment, the one at a tag, the missing one and its environment,
    # the PDF, the notebook's download link, the setup cell's wheel, Binder's wheel, the README's picture
    assert count == 11
    found = "\n".join(problems)
    assert "opens 'v0.1.0'" in found and "02_b.ipynb: no such file" in found
    assert "quiz.pdf" in found and release.SCREENSHOT in found and "fig_a_wide.png: no such file" in found
    assert len(problems) == 5, found
