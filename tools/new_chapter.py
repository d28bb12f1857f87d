"""Start a chapter: a notebook in the shape CONTRIBUTING.md describes, and its line in ``_toc.yml``.

    make chapter NAME=09_the_next_question      # python -m tools.new_chapter 09_the_next_question

The notebook (``notebooks/<NAME>.ipynb``, not executed) has every part a chapter needs, each holding a
small working example to replace: the objectives, the intuition, a labelled section whose code measures
something with ``helpers`` and glues it, a figure with its caption and alt text and its build-only cell,
the claims it decides (none yet), three exercises with folded solutions, and the key takeaways, each
traced to the section that shows it. ``_toc.yml`` lists the chapter after the last one. Nothing else is
written: the next steps are CONTRIBUTING.md's ("Adding a chapter").
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from tools.helpers_index import chapter_label
from tools.notebook_format import ROOT, chapter_notebooks
from tools.slides import set_slide_types

NAME = re.compile(r"^\d{2}[a-z]?_[a-z0-9_]+$")  # 09_the_next_question, 07c_a_deeper_look

SETUP = """import math

import matplotlib.pyplot as plt
import torch

import helpers
from helpers import glue

helpers.use_book_style()
device = helpers.get_device()
SEEDS = range(20)  # every measured effect below holds across all of these seeds
print(f"Computing on: {device.type}")"""

MEASURE = """D_KS = (16, 64, 256)


def score_std(d_k: int, seed: int) -> float:
    \"\"\"Standard deviation of the raw scores q . k of 128 standard-normal queries and keys.\"\"\"
    helpers.seed_everything(seed)
    q, k = torch.randn(2, 128, d_k, device=device)
    return helpers.attention_logits(q, k, scale=1.0).std().item()


stds = torch.tensor([[score_std(d_k, seed) for seed in SEEDS] for d_k in D_KS])  # (d_k, seed)
helpers.table(
    [(d_k, row.mean(), row.mean() / math.sqrt(d_k)) for d_k, row in zip(D_KS, stds)],
    ["dₖ", "std of q·k", "std / √dₖ"],
    f"The spread of the raw scores, means over {len(SEEDS)} seeds",
    [None, ".2f", ".3f"],
)"""

CHECK = """# every seed: the spread is sqrt(d_k) within 10 % (fails if the scores grew otherwise)
assert ((stds / torch.tensor(D_KS).sqrt()[:, None] - 1).abs() < 0.1).all()
glue("n_seeds", len(SEEDS))
glue("std_64", stds[1].mean().item(), digits=1)"""

FIGURE = """def draw_spread() -> plt.Figure:
    fig, ax = plt.subplots()
    helpers.plot_band(ax, D_KS, stds.T, label="std of $q \\\\cdot k$", marker="o")
    ax.set(xscale="log", yscale="log", xlabel="key width $d_k$", ylabel="spread of the raw scores")
    ax.legend()
    return fig


fig = draw_spread()
plt.show()"""

BUILD = """from tools import figures  # book production: the figures' other layouts and Chinese copies, never shown here

figures.glue_copies("{figure}", draw_spread)"""


def markdown(stem: str, title: str) -> dict[str, str]:
    n = chapter_label(stem)
    section, figure = f"sec-ch{n}-measure", f"fig-ch{n}-spread"
    return {
        "title": f"""# {title}

:::{{admonition}} What you will learn
:class: tip
- What this chapter measures, in one sentence a reader can check.
- Which claim of the article it decides, and how.
- What to do with the result.
:::

## The intuition

A few sentences, before any formula, of why the answer should be what it is. The scale comes from the
Transformer paper {{cite}}`vaswani2017attention`.""",
        "section": f"""({section})=
## The measurement

The raw scores of standard-normal queries and keys spread like $\\sqrt{{d_k}}$:

$$
\\operatorname{{Std}}(q \\cdot k) = \\sqrt{{d_k}} .
$$ (eq-ch{n}-spread)

The cell below measures it over {{glue:text}}`n_seeds` seeds.""",
        "result": f"""At $d_k = 64$ the spread is {{glue:text}}`std_64:.1f`, as {{eq}}`eq-ch{n}-spread` says
({{numref}}`Figure %s <{figure}>`).""",
        "exercises": f"""## Exercises

```{{exercise}} A first exercise (★, 10 min)
:label: ex-ch{n}-first

A question that the reader answers with pen and paper.
```

```{{solution}} ex-ch{n}-first
:class: dropdown

The answer, and why.
```

```{{exercise}} A second exercise (★★, 15 min)
:label: ex-ch{n}-second

A question that the reader answers by changing the code above.
```

```{{solution}} ex-ch{n}-second
:class: dropdown

The answer, and the code that shows it.
```

```{{exercise}} A third exercise (★★★, 30 min)
:label: ex-ch{n}-third

A question that goes beyond the chapter.
```

```{{solution}} ex-ch{n}-third
:class: dropdown

The answer.
```""",
        "takeaways": f"""## Key takeaways

- The raw scores spread like $\\sqrt{{d_k}}$ ({{numref}}`§%s <{section}>`).
- Every measured number on this page is glued, and its check sits beside it ({{numref}}`§%s <{section}>`).
- The last bullet says what to take to the next chapter ({{numref}}`§%s <{section}>`).""",
        "figure": figure,
    }


def chapter(stem: str, title: str) -> nbformat.NotebookNode:
    """The new chapter's notebook, tidy (slide types, folds) but not executed. (The learner edition's
    setup cell is written by the release, ``tools/learner.py``.)"""
    text = markdown(stem, title)
    figure = text["figure"]
    new_md, new_code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        new_md(text["title"]),
        new_code(SETUP, metadata={"tags": ["hide-input"]}),
        new_md(text["section"]),
        new_code(MEASURE),
        new_code(CHECK, metadata={"tags": ["hide-input"]}),
        new_code(
            FIGURE,
            metadata={
                "tags": ["hide-input"],
                "mystnb": {
                    "figure": {
                        "name": figure,
                        "caption": "The spread of the raw scores against $d_k$ (bands: {glue:text}`n_seeds` seeds).",
                    },
                    "image": {"alt": "A rising line on log-log axes: the spread of q·k grows like the root of d_k."},
                },
            },
        ),
        new_code(
            BUILD.format(figure=figure.replace("-", "_")), metadata={"tags": ["remove-cell", "nbval-ignore-output"]}
        ),
        new_md(text["result"]),
        new_md(text["exercises"]),
        new_md(text["takeaways"]),
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = nbformat.read(chapter_notebooks()[0], as_version=4).metadata  # the kernel the book runs
    set_slide_types(notebook)
    return notebook


def add_to_toc(toc: str, stem: str) -> str:
    """``_toc.yml`` with ``notebooks/<stem>`` as the last entry of the numbered chapters."""
    lines = toc.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == "- caption: Chapters")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("  - caption:")), len(lines))
    last = max(i for i in range(start, end) if lines[i].strip())
    indent = next(line for line in lines[start:end] if line.strip().startswith("- file: notebooks/"))
    lines.insert(last + 1, indent[: len(indent) - len(indent.lstrip())] + f"- file: notebooks/{stem}")
    return "\n".join(lines)


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the file name without .ipynb: two digits, then words (09_the_next_question)")
    parser.add_argument("--title", default="", help="the chapter's title (default: from its name)")
    args = parser.parse_args(argv)
    if not NAME.match(args.name):
        parser.error(f"NAME must look like 09_the_next_question, got {args.name!r}")
    path = root / "notebooks" / f"{args.name}.ipynb"
    if path.exists():
        parser.error(f"{path.relative_to(root)} exists already")
    title = args.title or args.name.split("_", 1)[1].replace("_", " ").capitalize()
    nbformat.write(chapter(args.name, title), path)
    toc = root / "_toc.yml"
    toc.write_text(add_to_toc(toc.read_text(encoding="utf-8"), args.name), encoding="utf-8")
    print(f"wrote {path.relative_to(root)} and its line in _toc.yml; next: CONTRIBUTING.md, 'Adding a chapter'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
