"""The learner edition, generated here and tested the way a learner meets it (tools/learner.py).

It is a build product (never committed): this generates both languages into a temporary folder, as
the site's build and ``make release`` do, and checks them.

- Rendered by a plain notebook renderer (nbconvert's HTML, as JupyterLab, Colab, VS Code and
  GitHub render Markdown), no MyST is left: no role, directive fence, option, label or
  equation label, in the Markdown or in the HTML it becomes.
- Every number the prose shows is the value the committed run glued, formatted as the role
  asks, and marked; no glue role is lost or invented.
- Every solution is folded in a ``<details>``, and every exercise is not.
- Its code cells are the chapter's as the learner should see them: the setup cell first, then
  every code cell not tagged ``remove-cell`` (no build-only cell), byte for byte.
- Its outputs are the committed run's, less the glue records no front end shows: every figure is
  there before anything runs (the Chinese copy in the Chinese edition), every table printed.
- Two chapters (English 6, Chinese 7b) run top to bottom in a fresh kernel of the light environment
  (binder's packages only), helpers installed by the notebook's own setup cell from a wheel served
  on 127.0.0.1, as from the site; a failed install says what to do.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from myst_nb.core.variables import format_plain_text
from nbconvert import HTMLExporter

from tools import learner, learner_run
from tools.notebook_format import COLAB_MARKER, GLUE_PREFIX, ROOT, chapter_notebooks, glued_outputs, read, tags
from tools.release import build_wheel

EDITIONS = learner.LANGUAGES
CHAPTERS = chapter_notebooks()
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
# what MyST writes and a plain renderer shows raw
MYST = {
    "role": re.compile(r"\{[\w:.-]+\}`"),
    "directive fence": re.compile(r"^\s*(`{3,}|:{3,})\s*\{", re.M),
    "colon fence": re.compile(r"^\s*:{3,}", re.M),
    "directive option": re.compile(r"^\s*:(class|label|name|nonumber|open|alt|width):", re.M),
    "label": re.compile(r"^\s*\([\w:.-]+\)=\s*$", re.M),
    "equation label": re.compile(r"\$\$\s*\([\w:.-]+\)"),
    "substitution": re.compile(r"\{\{\s*\w+\s*\}\}"),
    "MyST comment": re.compile(r"^%", re.M),
}


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    """Both languages of the learner edition, written as the build writes them."""
    folder = tmp_path_factory.mktemp("learner")
    learner.write(folder)
    return folder


def learner_file(folder: Path, path: Path, language: str) -> Path:
    return folder / language / path.name


def edition_cases():
    return [pytest.param(path, language, id=f"{language}-{path.stem}") for language in EDITIONS for path in CHAPTERS]


def test_the_chapters_carry_no_setup_cell():
    """The learner builder writes the setup cell; a chapter that carried one would install twice."""
    for path in CHAPTERS:
        assert not [c for c in read(path).cells if c.source.startswith(COLAB_MARKER)], path.name


def visible_code(path: Path) -> list[nbformat.NotebookNode]:
    return [c for c in read(path).cells if c.cell_type == "code" and "remove-cell" not in tags(c)]


@pytest.mark.parametrize(("path", "language"), edition_cases())
def test_code_is_the_chapters_less_its_build_only_cells(edition, path, language):
    cells = [c for c in read(learner_file(edition, path, language)).cells if c.cell_type == "code"]
    assert cells[0].source == learner.setup_cell(language).source, "the setup cell comes first"
    assert [c.source for c in cells[1:]] == [c.source for c in visible_code(path)]
    assert not [c for c in cells if "remove-cell" in tags(c)], "a build-only cell is left"


def figures(cells) -> list[str]:
    return [o.data["image/png"] for c in cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]


def seen(cell) -> list:
    """The outputs a learner sees: none of the glue records (``application/papermill.record/*``)."""
    return [o for o in cell.outputs if not ("data" in o and all(key.startswith(GLUE_PREFIX) for key in o.data))]


@pytest.mark.parametrize(("path", "language"), edition_cases())
def test_outputs_are_the_committed_runs_less_the_glue(edition, path, language):
    cells = [c for c in read(learner_file(edition, path, language)).cells if c.cell_type == "code"][1:]
    source = visible_code(path)
    assert [len(c.outputs) for c in cells] == [len(seen(c)) for c in source]
    assert not [key for c in cells for o in c.outputs for key in o.get("data", {}) if key.startswith(GLUE_PREFIX)]
    shown, committed = figures(cells), figures(source)
    assert len(shown) == len(committed) > 0, "every figure shows before anything runs"
    if language == "en":
        assert shown == committed
        assert [o for c in cells for o in c.outputs if o.output_type == "stream"] == [
            o for c in source for o in c.outputs if o.output_type == "stream"
        ]
    else:  # the Chinese copies that the chapter glues, as the Chinese pages show them
        copies = {g.name: g for g in glued_outputs(read(path)) if g.is_figure}
        names = [c.metadata.get("mystnb", {}).get("figure", {}).get("name", "") for c in source if figures([c])]
        assert all(f"{n.replace('-', '_')}_zh" in copies for n in names)
        assert not set(shown) & set(committed), "an English figure in the Chinese edition"


class Rendered(HTMLParser):
    """Text of a rendered notebook's Markdown, inside and outside ``<details>``, code apart."""

    def __init__(self):
        super().__init__()
        self.inside: list[str] = []
        self.outside: list[str] = []
        self.details = 0
        self.code = 0
        self.markdown = 0  # depth inside a rendered Markdown cell
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class") or ""
        if tag in ("br", "img", "hr", "input", "meta", "link"):
            return
        self.depth += 1
        if self.markdown:
            self.markdown += 1
        elif "jp-RenderedMarkdown" in classes:
            self.markdown = 1
        if tag == "details" and self.markdown:
            self.details += 1
        if tag in ("code", "pre") and self.markdown:
            self.code += 1

    def handle_endtag(self, tag):
        if tag in ("br", "img", "hr", "input", "meta", "link"):
            return
        if self.markdown:
            if tag == "details":
                self.details -= 1
            if tag in ("code", "pre"):
                self.code -= 1
            self.markdown -= 1

    def handle_data(self, data):
        if self.markdown and not self.code:
            (self.inside if self.details else self.outside).append(data)


def render(path: Path) -> tuple[str, Rendered]:
    notebook = read(path)
    notebook.cells = [c for c in notebook.cells if c.cell_type == "markdown"]  # the prose; highlighting code costs 90 %
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    parsed = Rendered()
    parsed.feed(html)
    return html, parsed


def plain(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def rendered(edition) -> dict[tuple[str, str], tuple[str, Rendered]]:
    return {(lang, path.name): render(learner_file(edition, path, lang)) for path in CHAPTERS for lang in EDITIONS}


@pytest.mark.parametrize(("path", "language"), edition_cases())
def test_no_myst_is_left(edition, path, language, rendered):
    notebook = read(learner_file(edition, path, language))
    markdown = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    prose = CODE.sub("", markdown)
    found = {name: pattern.findall(prose)[:3] for name, pattern in MYST.items() if pattern.search(prose)}
    assert not found, f"MyST left in the Markdown: {found}"
    _, parsed = rendered[language, path.name]
    text = plain(" ".join(parsed.outside + parsed.inside))
    for leftover in (
        "{glue",
        "{ref}",
        "{numref}",
        "{eq}",
        "{doc}",
        "{term}",
        "{cite}",
        "{prf:",
        ":::",
        "```",
        ":label:",
        ":class:",
    ):
        assert leftover not in text, f"{leftover!r} shows in the rendered notebook"
    assert not re.search(r"\((sec|fig|eq|thm|ex|claim)-[\w-]+\)=", text), "a label shows in the rendered notebook"
    assert "&lt;details" not in rendered[language, path.name][0], "a <details> was escaped, not rendered"


def expected_numbers(path: Path) -> Counter[str]:
    """Every glue role of a chapter's prose and captions, as the value it must show: found here
    with a regex of its own and formatted by myst-nb's own function, not by tools.learner."""
    notebook = read(path)
    values = {path.stem: {g.name: g.text for g in glued_outputs(notebook)}}
    texts = [
        c.source
        for c in notebook.cells
        if c.cell_type == "markdown" and "remove-cell" not in c.metadata.get("tags", [])
    ]
    texts += [
        c.metadata["mystnb"]["figure"]["caption"]
        for c in notebook.cells
        if c.cell_type == "code" and c.metadata.get("mystnb", {}).get("figure", {}).get("caption")
    ]
    found: Counter[str] = Counter()
    for text in texts:
        for role, content in re.findall(r"\{(glue(?::\w*)?)\}`([^`]+)`", text):
            key, spec = content.rsplit(":", 1) if role == "glue:text" and ":" in content else (content, "")
            page = path.stem
            if "::" in key:
                other, key = key.split("::")
                page = Path(other).stem
                values.setdefault(page, {g.name: g.text for g in glued_outputs(read(path.parent / other))})
            found[format_plain_text(values[page][key], spec or ("s" if role == "glue:text" else ""))] += 1
    return found


@pytest.mark.parametrize(("path", "language"), edition_cases())
def test_every_number_is_the_glued_value(edition, path, language):
    notebook = read(learner_file(edition, path, language))
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    shown: Counter[str] = Counter()
    for value in sorted(expected := expected_numbers(path), key=len, reverse=True):  # "0.5" before "5"
        pattern = re.compile(r"(?<![\w.+-])" + re.escape(value + learner.MARK))
        shown[value] = len(pattern.findall(text))
        text = pattern.sub("", text)
    assert shown == expected, (
        f"glued but shown a different number of times: {dict((expected - shown) + (shown - expected))}"
    )
    left = [text[max(0, m.start() - 30) : m.end()] for m in re.finditer(re.escape(learner.MARK), text)]
    assert not left, f"marked numbers that no glue role of the chapter computes: {left[:5]}"


def fragments(blocks, name: str) -> list[str]:
    """A distinctive run of plain text from each directive ``name`` in parsed Markdown."""
    found = []
    for block in learner.walk(blocks):
        if isinstance(block, learner.Directive) and block.name == name:
            text = " ".join(line for inner in block.body if isinstance(inner, learner.Text) for line in inner.lines)
            pieces = re.split(r"\$[^$]*\$|`[^`]*`|\{[^}]*\}|[*_\[\]()<>|]|\d", text)
            longest = max((plain(p) for p in pieces), key=len, default="")
            if len(longest) >= 8:
                found.append(longest)
    return found


@pytest.mark.parametrize(("path", "language"), edition_cases())
def test_solutions_fold_and_exercises_do_not(path, language, rendered):
    source = learner.source_of(str(path.relative_to(ROOT).with_suffix("")), language)
    blocks = [block for c in source.cells if c.cell_type == "markdown" for block in learner.parse(c.source)]
    solutions, exercises = fragments(blocks, "solution"), fragments(blocks, "exercise")
    _, parsed = rendered[language, path.name]
    inside, outside = plain(" ".join(parsed.inside)), plain(" ".join(parsed.outside))
    for text in solutions:
        assert text in inside and text not in outside, f"a solution is not folded: {text!r}"
    for text in exercises:
        assert text in outside, f"an exercise is folded or missing: {text!r}"
    assert len(solutions) == sum(
        isinstance(b, learner.Directive) and b.name == "solution" for b in learner.walk(blocks)
    )


# Two of the cheapest chapters to run (make test's CPU budget): English 6, which shows the article's own error
# and carries on, and Chinese 7b; python -m tools.learner_run runs all of them from a release.
KERNEL_RUNS = [("en", "06_the_experiment"), ("zh_CN", "07b_advanced_questions")]


@pytest.mark.kernel
def test_runs_top_to_bottom_in_the_light_environment(edition, tmp_path):
    """As a learner downloads them: a fresh kernel each, helpers installed by the setup cell from the wheel
    (served on 127.0.0.1 as the site serves it); first a setup cell whose download fails, which says what to do."""
    site = tmp_path / "site"
    build_wheel(site / "dist")
    failing = nbformat.v4.new_notebook(cells=[learner.setup_cell("en")])
    failing.cells[0].source = failing.cells[0].source.replace(learner.site_url(), "http://127.0.0.1:9/")
    (tmp_path / "failing").mkdir()
    nbformat.write(failing, tmp_path / "failing" / "00_setup.ipynb")
    notebooks = [tmp_path / "failing" / "00_setup.ipynb"]
    notebooks += [edition / language / f"{stem}.ipynb" for language, stem in KERNEL_RUNS]
    runs = learner_run.run(notebooks, site, tmp_path / "kernel")
    assert [r.error for r in runs] == [None] * len(runs), runs
    printed = "".join(o.get("text", "") for c in runs[0].notebook.cells for o in c.outputs)
    assert "Could not install the book's helpers package" in printed and learner.wheel_name() in printed
    for item in runs[1:]:
        setup, *cells = [c for c in item.notebook.cells if c.cell_type == "code"]
        assert not [o for o in setup.outputs if o.output_type == "error"]
        assert figures(cells), f"{item.path.name}: no figure drawn"
        nbformat.validate(item.notebook)
    printed = "".join(o.get("text", "") for c in runs[1].notebook.cells for o in c.get("outputs", []))
    assert "RuntimeError: element 0 of tensors does not require grad" in printed  # the article's error, shown


SAMPLE = r"""(sec-sample)=
## A section

:::{admonition} A box
:class: tip
Text with {glue:text}`p_small_02` and {glue:text}`exp88_fp32:.3g`, a {term}`logit <logit>`,
{cite}`dao2022flashattention`, {eq}`eq-softmax-jacobian`, {prf:ref}`thm-jacobian-bound`,
{numref}`§%s <sec-ch3-gradient>`, {ref}`sec-ch3-two-logits`,
{doc}`Chapter 1 <01_where_the_scale_sits>`, {download}`a slide <../book/_generated/fig_whole_chain_wide.png>`,
{math}`x^2` and `{glue:text}` in code.
:::

$$ a = b $$ (eq-sample)

````{dropdown} A fold
```{prf:proof}
Because.
```
````

```{exercise} Try it
:label: ex-sample

Do it.
```

```{solution} ex-sample
:class: dropdown

Done.
```

```{scale-explorer}
:name: scale-explorer

The static stand-in, over {glue:text}`n_seeds` seeds.
```

```{unknown-directive} Its title
Its body.
```
"""


def test_the_converter_handles_the_books_vocabulary():
    """Every directive and role the chapters use, and one that none uses yet, on one sample page."""
    book, page = learner.collect("en"), "notebooks/03_softmax_saturation"
    learner.PageNumbers(page, "9", book, learner.Numbering()).markdown(-1, SAMPLE)  # as if it were chapter 9's
    ctx = learner.Context(book, learner.editions()["en"], page, [], list(book.directives[page, -1]))
    out = "\n".join(learner.render(learner.parse(SAMPLE), ctx, book.headings[page, -1]))
    prose = CODE.sub("", out)
    assert not [name for name, pattern in MYST.items() if pattern.search(prose)], out
    for expected in (
        "## 9.1. A section",
        "> **A box**",
        f"0.4502{learner.MARK} and 1.65e+38{learner.MARK}",
        "[logit](https://sqrt-dk-book.github.io/why-sqrt-dk/book/glossary.html#term-logit)",
        "[[Dao et al., 2022](https://sqrt-dk-book.github.io/why-sqrt-dk/book/bibliography.html)]",
        "[(3.1)](https://sqrt-dk-book.github.io/why-sqrt-dk/notebooks/03_softmax_saturation.html#equation-eq-softmax-jacobian)",
        "[Theorem 3.1](",
        "[§3.4](",
        "[Two logits, exactly](",
        "[Chapter 1](https://sqrt-dk-book.github.io/why-sqrt-dk/notebooks/01_where_the_scale_sits.html)",
        # where Sphinx copies a download: _downloads/<md5 of its path from the source folder>/
        "[a slide](https://sqrt-dk-book.github.io/why-sqrt-dk/_downloads/14a9669b3e196e5b948cdcae03731474/fig_whole_chain_wide.png)",
        "$x^2$ and `{glue:text}` in code",
        "<details><summary>A fold</summary>",
        "Because.\n\n∎",
        "$$ a = b \\tag{9.1} $$",
        "**Exercise 9.1 (Try it)**",
        "<details><summary>Solution to Exercise 9.1 (Try it)</summary>",
        "#scale-explorer).)*\n\nThe static stand-in, over 20" + learner.MARK,
        "> **Its title**\n>\n> Its body.",
    ):
        assert expected in out, f"{expected!r} not in:\n{out}"
    assert ctx.unknown == ["directive {unknown-directive}"]
