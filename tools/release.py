"""The release: exactly what gets published, in one folder (``make release``).

    python -m tools.release --preflight   # exit 1, saying why, where this machine cannot print the PDFs
    python -m tools.release               # assemble _build/release from the site `make book` built
    python -m tools.release --notebooks   # only _build/release/notebooks, from the sources (make lab)
    python -m tools.release --links [DIR] # check every launch, download and install link of a release

``make release`` builds the site as ``make book`` does (the same builds, reused), then this
assembles ``_build/release/``:

- ``site/``: the GitHub Pages artifact. ``_build/html`` as built: the English edition at the
  root, the Chinese one under ``zh/``, each with the lecture kit's PDFs in ``lecture/`` and the
  learner notebooks at ``learner/<language>/<chapter>.ipynb`` (written by the English build,
  ``book/_ext/learner_links.py``); then the helpers wheel in ``dist/`` (what every learner
  notebook's setup cell installs) and ``landing-page.png``, a screenshot of the built landing
  page (the README shows it).
- ``notebooks/``: the tree the publishing workflow pushes to the repository's ``notebooks``
  branch, which the site's Colab and Binder buttons open: ``en/`` and ``zh_CN/`` (the learner
  notebooks), ``binder/`` (the light environment, helpers from the site's wheel) and a README.

It fails, saying why, where a PDF that a page links is missing or any link of the release does
not resolve to a file the release holds (:func:`check_links`).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any

from tools import learner
from tools.browser import CHROMIUM_FLAGS, chromium, serve, settle
from tools.notebook_format import COLAB_MARKER, ROOT, read

HTML = ROOT / "_build" / "html"
RELEASE = ROOT / "_build" / "release"
SCREENSHOT = "landing-page.png"  # at the root of the site: the README's picture
BINDER = ROOT / "binder"


def preflight() -> list[str]:
    """What this machine lacks to build a release (each PDF is printed by Chromium, the Chinese ones in a CJK font)."""
    problems = []
    if chromium() is None:
        problems.append("no chromium on PATH: the lecture kit's PDFs cannot be printed (Debian: `make browser`)")
    fonts = subprocess.run(["fc-list"], capture_output=True, text=True) if shutil.which("fc-list") else None
    if fonts is None or "Noto Sans CJK" not in fonts.stdout:
        problems.append("no Noto Sans CJK font: the Chinese PDFs would print without Chinese glyphs (`make browser`)")
    return problems


def build_wheel(folder: Path) -> Path:
    """The helpers wheel (``pip wheel``, no dependencies: helpers declares none) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(folder), "."],
        cwd=ROOT,
        check=True,
    )
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' scratch folder
    wheel = folder / learner.wheel_name()
    if not wheel.is_file():
        raise SystemExit(f"release: pip wrote no {wheel.name} (pyproject.toml's name or version changed?)")
    return wheel


def binder_requirements() -> str:
    """binder/requirements.txt for the notebooks branch: helpers from the site's wheel, not from a checkout."""
    lines = (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()
    packages = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    packages = [f"{learner.DISTRIBUTION} @ {learner.wheel_url()}" if line.strip() == "." else line for line in packages]
    head = "# Binder's light, CPU-only environment for the learner notebooks (written by tools/release.py)."
    return "\n".join([head, *packages]) + "\n"


def commit() -> str:
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else "unknown"


README = """# The learner notebooks of "{title}"

Written by the book's publishing workflow (`make release`) from commit {commit}; do not edit this branch.

- `en/`, `zh_CN/`: every chapter as a plain notebook (English, Chinese), with the book's own outputs.
  Open one on Colab or Binder from a chapter's page of the book: {site}
- `binder/`: the light environment Binder builds (CPU torch, matplotlib, the book's `helpers`).

The first code cell of each notebook installs `helpers` from {wheel} where it is missing.
"""


def write_notebooks_tree(out: Path, learner_folder: Path | None = None) -> Path:
    """The ``notebooks`` branch's tree in ``out``: the learner notebooks (copied from ``learner_folder``,
    or generated from the sources), Binder's files, a README."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if learner_folder is not None:
        for language in learner.LANGUAGES:
            shutil.copytree(learner_folder / language, out / language)
    else:
        learner.write(out)
    (out / "binder").mkdir()
    (out / "binder" / "requirements.txt").write_text(binder_requirements(), encoding="utf-8")
    shutil.copyfile(BINDER / "runtime.txt", out / "binder" / "runtime.txt")
    readme = README.format(
        title=learner.book_title("en"), commit=commit(), site=learner.site_url(), wheel=learner.wheel_url()
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    return out


def screenshot(site: Path, browser: Any = None) -> Path:
    """The landing page as a desktop reader first sees it (1280 x 800), from the built site, in ``browser``
    (a Playwright browser; by default a Chromium of its own)."""
    path = site / SCREENSHOT
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(serve(site))
        if browser is None:
            from playwright.sync_api import sync_playwright

            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
            stack.callback(browser.close)
        page = browser.new_page(viewport={"width": 1280, "height": 800}, color_scheme="light")
        page.goto(f"{url}/book/index.html", wait_until="load")  # the root index.html only forwards here
        settle(page)
        page.screenshot(path=str(path))
        page.close()
    return path


def assemble(html: Path = HTML, out: Path = RELEASE, browser: Any = None) -> list[str]:
    """``out/site`` and ``out/notebooks`` from the built site; return what is wrong with them (nothing: []).
    ``browser``: the Playwright browser that photographs the landing page (by default, one of its own)."""
    if not (html / "index.html").is_file() or not (html / "zh" / "index.html").is_file():
        return [f"{html} holds no built site in both editions (make book)"]
    shutil.rmtree(out, ignore_errors=True)
    site = out / "site"
    shutil.copytree(html, site)
    build_wheel(site / "dist")
    write_notebooks_tree(out / "notebooks", site / "learner")
    screenshot(site, browser)
    count, problems = check_links(out)
    print(f"release: {count} launch, download, install and PDF links checked, {len(problems)} broken")
    return problems


# ---------------------------------------------------------------------------------------------
# The links of a release

HREF = re.compile(r'href="([^"]+)"')
WHEEL_URL = re.compile(r"""https?://[^\s"'<>)]+\.whl""")
FILES = (".ipynb", ".pdf", ".whl")  # what a page links that the release must hold
MARKDOWN_LINK = re.compile(r"\]\((https?://[^)\s]+)\)")


def check_links(release: Path, readme: Path = ROOT / "README.md") -> tuple[int, list[str]]:
    """Every Colab and Binder button and download link of both editions' pages, every link to a PDF,
    every install URL (the learner notebooks' setup cells, Binder's requirements), every file the
    learner notebooks link on the site (a figure's slide layout) and the README's picture: how many,
    and each that does not resolve to a file of ``release`` (``site/`` for the site's URLs,
    ``notebooks/`` for the ``notebooks`` branch)."""
    site, notebooks = release / "site", release / "notebooks"
    base = learner.site_url()
    owner, name = learner.repository()
    colab = re.compile(
        rf"^https://colab\.research\.google\.com/github/{owner}/{name}/blob/(?P<ref>[^/]+)/(?P<path>.+)$"
    )
    binder = re.compile(rf"^https://mybinder\.org/v2/gh/{owner}/{name}/(?P<ref>[^?]+)\?urlpath=lab/tree/(?P<path>.+)$")
    count, problems = 0, []

    def expect(where: str, url: str, target: Path, root: Path) -> None:
        nonlocal count
        count += 1
        inside = target.resolve().is_relative_to(root.resolve())
        if not (inside and target.is_file()):
            problems.append(f"{where}: {url} -> {target.relative_to(release) if inside else target}: no such file")

    def branch_file(where: str, url: str, ref: str, path: str) -> None:
        if ref != learner.NOTEBOOKS_BRANCH:
            problems.append(f"{where}: {url} opens {ref!r}, not the branch the release writes")
        expect(where, url, notebooks / path, notebooks)

    def site_file(where: str, url: str) -> None:
        path = url.removeprefix(base).split("#")[0]
        expect(where, url, site / (path + "index.html" if path.endswith("/") or not path else path), site)

    for page in sorted(site.rglob("*.html")):
        where = str(page.relative_to(release))
        for href in map(unescape, HREF.findall(page.read_text(encoding="utf-8"))):
            if match := colab.match(href):
                branch_file(where, href, match["ref"], match["path"])
            elif match := binder.match(href):
                branch_file(where, href, match["ref"], match["path"])
                expect(where, href + " (its environment)", notebooks / "binder" / "requirements.txt", notebooks)
            elif href.startswith(base):
                if href.split("#")[0].endswith(FILES):
                    site_file(where, href)
            elif "://" not in href and href.split("#")[0].endswith(FILES):
                expect(where, href, page.parent / href.split("#")[0], site)
    for path in sorted([*(site / "learner").rglob("*.ipynb"), *notebooks.rglob("*.ipynb")]):
        cells = read(path).cells
        where = str(path.relative_to(release))
        for text in (c.source for c in cells if c.cell_type == "markdown"):  # a page's downloads, as links
            for url in MARKDOWN_LINK.findall(text):
                if url.startswith(base) and url.split("#")[0].endswith((*FILES, ".png")):
                    site_file(where, url)
        cell = next((c for c in cells if c.cell_type == "code"), None)
        if cell is None or not cell.source.startswith(COLAB_MARKER):
            problems.append(f"{where}: its first code cell is not the setup cell")
            continue
        urls = list(dict.fromkeys(WHEEL_URL.findall(cell.source)))  # the install line and the message name it
        if not urls:
            problems.append(f"{where}: the setup cell names no wheel to install")
        for url in urls:
            site_file(where, url)
    requirements = notebooks / "binder" / "requirements.txt"
    for url in WHEEL_URL.findall(requirements.read_text(encoding="utf-8")) if requirements.is_file() else []:
        site_file(str(requirements.relative_to(release)), url)
    for url in MARKDOWN_LINK.findall(readme.read_text(encoding="utf-8")):
        if url.startswith(base) and url.endswith(".png"):
            site_file(readme.name, url)
    return count, problems


def sizes(release: Path) -> list[str]:
    """What the release holds, with sizes: the lines ``make release`` ends with."""

    def size(paths: list[Path]) -> str:
        total = sum(p.stat().st_size for p in paths if p.is_file())
        return f"{total / 2**20:8.1f} MiB" if total >= 2**20 else f"{total / 2**10:8.1f} KiB"

    def tree(path: Path) -> list[Path]:
        return list(path.rglob("*")) if path.is_dir() else [path]

    site, notebooks = release / "site", release / "notebooks"
    apart = [site / "zh", site / "learner", site / "dist", site / SCREENSHOT]
    english = [p for p in tree(site) if not any(p == a or a in p.parents for a in apart)]
    lines = [f"{size(tree(site))}  site/ (the Pages artifact), of which:"]
    for edition, files, root in (("English", english, site), ("Chinese", tree(site / "zh"), site / "zh")):
        pages = sum(p.suffix == ".html" for p in files)
        lines.append(f"{size(files)}  {root.relative_to(release)}/ (the {edition} edition: {pages} HTML files)")
        lines += [f"{size([p])}  {p.relative_to(release)}" for p in sorted((root / "lecture").glob("*.pdf"))]
    for language in learner.LANGUAGES:
        folder = site / "learner" / language
        with_outputs = sum(
            any(c.get("outputs") for c in read(p).cells if c.cell_type == "code") for p in folder.glob("*.ipynb")
        )
        lines.append(f"{size(tree(folder))}  {folder.relative_to(release)}/ ({with_outputs} notebooks with outputs)")
    lines += [f"{size([p])}  {p.relative_to(release)}" for p in sorted((site / "dist").glob("*.whl"))]
    if (site / SCREENSHOT).is_file():
        lines.append(f"{size([site / SCREENSHOT])}  {(site / SCREENSHOT).relative_to(release)}")
    held = ", ".join(sorted(p.name + ("/" if p.is_dir() else "") for p in notebooks.iterdir()))
    lines.append(f"{size(tree(notebooks))}  notebooks/ (the notebooks branch: {held})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preflight", action="store_true", help="only check this machine can print the PDFs")
    parser.add_argument("--notebooks", action="store_true", help="only write _build/release/notebooks")
    parser.add_argument("--links", nargs="?", const=RELEASE, type=Path, help="only check a release's links")
    args = parser.parse_args()
    if args.preflight:
        problems = preflight()
        for problem in problems:
            print(f"make release: {problem}", file=sys.stderr)
        return 1 if problems else 0
    if args.notebooks:
        print(f"release: {write_notebooks_tree(RELEASE / 'notebooks')}")
        return 0
    if args.links is not None:
        count, problems = check_links(args.links)
    else:
        problems = assemble()
        count = None
    for problem in problems:
        print(f"release: {problem}", file=sys.stderr)
    if count is not None:
        print(f"release: {count} links checked, {len(problems)} broken")
    if problems:
        return 1
    if args.links is None:
        print("\n".join(["release: _build/release", *sizes(RELEASE)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
