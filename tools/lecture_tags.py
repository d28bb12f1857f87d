"""The 90-minute lecture's cells, in one place (``python -m tools.lecture_tags``).

The lecture deck (``book/_ext/book_slides.py``, ``_build/html/slides/lecture.html``) is
every cell tagged ``lecture``, in reading order, with the speaker notes in the cell's
metadata ``notes``; ``book/lecture.yml`` adds the title, anchor and closing slides. This
module holds the selection: per notebook, the cells by their nbformat ``id`` with their
notes, and optional extra metadata (``{"lecture_code": True}`` keeps a code cell's code
on the slide; by default the lecture shows only what a code cell computes).

Applying it sets the tag and the notes on the listed cells and removes a stale
``lecture`` tag, ``notes`` and ``lecture_code`` from every other cell. It is idempotent:
a second run changes nothing. It never executes a notebook and touches only cell
metadata, so outputs stay as nbval checked them.

    python -m tools.lecture_tags                       # every notebook below
    python -m tools.lecture_tags 07_pitfalls 07b_advanced_questions
    python -m tools.lecture_tags --check               # change nothing; exit 1 if stale

A listed id that a notebook no longer has, or a listed cell that the deck would drop
(plumbing, folded or removed cells), is reported and makes the run exit 1, so that a
renamed cell does not silently leave a hole in the lecture.

Budget: at most 40 slides in all (tests/test_slides.py), three of them the frame's; a
cell taller than a 1280 x 720 slide is split in the browser, so keep this list well
under 37 cells. The minutes in the notes add up to 90 with the frame's slides.
"""

from __future__ import annotations

import argparse
import sys

import nbformat

from tools.notebook_format import ROOT, is_plumbing, read, tags

TAG = "lecture"
NEVER_ON_SLIDES = {"hide-input", "hide-cell", "remove-cell", "remove-input", "hide-output"}
SHOW_CODE = {"lecture_code": True}

# {notebook stem: [(cell id, speaker notes[, extra cell metadata]), ...]}, in reading order.
LECTURE: dict[str, list[tuple]] = {
    "01_where_the_scale_sits": [
        (
            "ch1-01",
            "0:05-0:10. Write softmax(QK^T/sqrt(d_k))V on the board and name the four steps. The whole lecture "
            "is about one factor: where it sits, why it is sqrt(d_k), and what goes wrong without it.",
        ),
        (
            "ch1-06",
            "Read the four lines aloud: scores, scale, softmax, weighted average. Point at the printed spreads: "
            "raw scores spread several units, logits about 1. Only 24 scores, so the numbers are rough; "
            "chapter 2 measures them properly.",
            SHOW_CODE,
        ),
        (
            "ch1-15",
            "0:10-0:14. The two beginner bugs. Ask the room what dividing after the softmax does before "
            "showing the figure: the rows no longer sum to 1, and the distribution keeps its saturated shape.",
        ),
        (
            "ch1-20",
            "The three panels: bug A's entropy falls with d_k, bug B is bug A shrunk, the correct attention is "
            "flat. The scale must act on the logits, before the softmax; where the code writes it does not matter.",
        ),
    ],
    "02_why_dot_products_grow": [
        (
            "ch2-03",
            "0:14-0:22. Derive Var(q.k) = d_k on the board: each product has mean 0 and variance 1, and "
            "variances of independent terms add. At d_k = 64 the spread is 8, at 128 about 11.3.",
        ),
        (
            "ch2-11",
            "The law over three orders of magnitude, 20 seeds, bands span every seed. This is the first link "
            "of the chain on the anchor slide.",
        ),
        (
            "ch2-22",
            "0:22-0:25. The usual objection: random vectors in high dimension are nearly orthogonal, so why "
            "do dot products grow? The cosine does shrink like 1/sqrt(d_k), but the norms grow like sqrt(d_k) "
            "each, and their product wins.",
        ),
    ],
    "03_softmax_saturation": [
        (
            "ch3-03",
            "0:25-0:30. Two logits by hand: the softmax of two is the logistic function of the gap. The "
            "article's examples: a gap of 0.2 gives two similar weights, a gap of 10 a nearly one-hot row.",
        ),
        (
            "ch3-06",
            "The curve flattens once the gap passes a few units, and unscaled gaps at d_k = 64 are often "
            "larger than that. A flat curve means a tiny derivative.",
        ),
        (
            "ch3-11",
            "0:30-0:36. The Jacobian p_i(delta_ij - p_j) and its bound: near a one-hot row every entry goes to "
            "0. Before the next slide, ask ONE question and take a show of hands: without the scale, is "
            "|dL/dQ| larger or smaller? Most rooms say smaller.",
        ),
        (
            "ch3-20",
            "The answer: larger. Through the logits the total gradient does not vanish, and into the queries "
            "it grows with d_k, because the unscaled logits are sqrt(d_k) times more sensitive to Q. What "
            "vanishes is the gradient of most rows.",
        ),
        (
            "ch3-23",
            "0:36-0:42. The mechanism: a row passes gradient in proportion to 1 - p_max. Most unscaled rows "
            "are frozen; a few near-tied rows carry large gradients. That is the sentence to remember: a nearly "
            "one-hot row passes almost no gradient, and the gradient concentrates on a few rows.",
        ),
    ],
    "04_what_the_scale_does": [
        (
            "cell-10",
            "0:42-0:47. With the scale nothing depends on the width: logit spread, entropy and both gradients "
            "stay flat from d_k = 16 to 4096. Without it all four drift.",
        ),
        (
            "cell-16",
            "0:47-0:52. The scale is a softmax temperature T = sqrt(d_k). Dividing by it gives the same entropy "
            "at every width. The temperature is a starting point: training may sharpen attention later.",
        ),
    ],
    "05_why_sqrt_dk": [
        (
            "cell-8",
            "0:52-0:56. Why sqrt(d_k) and not d_k or 2 sqrt(d_k)? Four multipliers of the same raw scores: a "
            "multiplier c gives logits of variance c^2 d_k. No scale over-sharpens, 1/d_k makes attention "
            "nearly uniform at initialisation, 1/(2 sqrt(d_k)) "
            "is softer but still fine. Only sqrt(d_k) gives unit spread at every width.",
        ),
        (
            "cell-29",
            "0:56-0:60. muP divides by d on purpose: trained queries and keys become correlated, and then the "
            "dot product grows like d, not sqrt(d). The right scale depends on what the vectors look like.",
        ),
    ],
    "06_the_experiment": [
        (
            "cell-04",
            "1:00-1:04. The article's own snippet, seed 42. Let the room guess the three numbers (variance, "
            "entropy, gradient norm) with and without the scale before revealing the next slide. This half of "
            "the chapter is quick to run live; the training grid is not (see the instructor guide).",
            SHOW_CODE,
        ),
        (
            "ch6-15",
            "The variance is right, the entropies are not (not 0.1 and 3.6), and the gradient claim holds only "
            "per entry: the total norm the code prints is larger without the scale.",
        ),
        (
            "ch6-24",
            "1:04-1:07. Rows, not totals: a row is frozen when one key takes nearly all the weight, and its "
            "gradient is large when two keys nearly tie. The sweep from d_k = 16 to 4096: the share of frozen "
            "rows grows with d_k, and so does the total "
            "gradient into the queries. A step large enough to move the frozen rows is too large for the live ones.",
        ),
        (
            "ch6-28",
            "1:07-1:12. A fair comparison: each multiplier gets its own learning rate, chosen by a rule fixed "
            "before the run. Without the scale the best SGD rate is several times smaller.",
        ),
        (
            "ch6-32",
            "At its own best rate the unscaled model learns, only later: the slow-down factors on the slide "
            "hold on every seed, with SGD and with Adam.",
        ),
        (
            "ch6-36",
            "1:12-1:16. At the rate tuned for the scaled model the unscaled one stalls, and a larger rate does "
            "not help, while the scaled control keeps learning. This is the training consequence of frozen rows.",
        ),
    ],
    "07_pitfalls": [
        (
            "11d1eaf6",
            "1:16-1:19. Where float16 NaNs really come from: the product QK^T overflows before any softmax "
            "runs, so a float32 softmax does not save you. Max subtraction already keeps exp from overflowing.",
        ),
        (
            "af3cb8d2",
            "Six ways to compute the same attention in 16-bit formats. Scaling q before the product, or "
            "upcasting the product, avoids the NaN; bfloat16 never overflows but is less precise.",
        ),
        (
            "84fef0d4",
            "1:19-1:22. helpers.diagnose_attention reads the scale from the attention weights alone, with the "
            "identity as values. Students can point it at their own attention function.",
            SHOW_CODE,
        ),
        (
            "4d191da9",
            "The article's debugging trick: set the scale to 1.0 on purpose and watch the loss. On this task "
            "the loss stays high; compare runs with the same seed and data.",
        ),
    ],
    "07b_advanced_questions": [
        (
            "9b3c20de",
            "1:22-1:24. The derivation assumes unit-variance components. Real initialisations give less: "
            "PyTorch's nn.Linear default and GPT-2's N(0, 0.02^2) start well below unit spread (numbers on the "
            "slide). None starts saturated: the case for the scale is what happens as the logits grow in training.",
        ),
        (
            "27f3c0aa",
            "1:24-1:26. Why V is not scaled: attention is linear in V, the weights do not change; only the "
            "branch's size does, and W_O absorbs it. Then go to the closing slide (1:26-1:30).",
        ),
    ],
}


def apply(notebook: nbformat.NotebookNode, selection: list[tuple]) -> tuple[list[str], list[str]]:
    """Set the selection on one notebook, in memory; return (changes, problems)."""
    wanted = {entry[0]: (entry[1], entry[2] if len(entry) > 2 else {}) for entry in selection}
    changes, problems = [], []
    ids = {cell.get("id") for cell in notebook.cells}
    problems += [f"no cell with id {cid!r}" for cid in wanted if cid not in ids]
    for cell in notebook.cells:
        meta = cell.metadata
        cid = cell.get("id")
        before = (list(meta.get("tags", [])), meta.get("notes"), meta.get("lecture_code"))
        if cid in wanted:
            notes, extra = wanted[cid]
            if TAG not in meta.get("tags", []):
                meta.setdefault("tags", []).append(TAG)
            meta["notes"] = notes
            if extra.get("lecture_code"):
                meta["lecture_code"] = True
            else:
                meta.pop("lecture_code", None)
            if set(tags(cell)) & NEVER_ON_SLIDES or (cell.cell_type == "code" and is_plumbing(cell.source)):
                problems.append(f"cell {cid!r} never becomes a slide (plumbing, folded or removed)")
        else:
            if TAG in meta.get("tags", []):
                meta["tags"].remove(TAG)
                if not meta["tags"]:
                    del meta["tags"]
            meta.pop("notes", None)
            meta.pop("lecture_code", None)
        after = (list(meta.get("tags", [])), meta.get("notes"), meta.get("lecture_code"))
        if after != before:
            changes.append(f"cell {cid}: {'lecture' if cid in wanted else 'no longer lecture'}")
    return changes, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebook stems (default: every notebook in LECTURE)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is stale")
    args = parser.parse_args(argv)
    names = args.notebooks or list(LECTURE)
    unknown = [n for n in names if n not in LECTURE]
    if unknown:
        parser.error(f"not in the lecture: {unknown}")
    total = sum(len(v) for v in LECTURE.values())
    print(f"lecture_tags: {total} cells in the lecture selection")
    stale, problems = [], []
    for name in names:
        path = ROOT / "notebooks" / f"{name}.ipynb"
        notebook = read(path)
        changes, found = apply(notebook, LECTURE[name])
        problems += [f"{name}: {p}" for p in found]
        if changes and not args.check:
            nbformat.write(notebook, path)
        stale += [f"{name}: {c}" for c in changes]
    print("\n".join(stale) if stale else "lecture_tags: nothing to do")
    if problems:
        print("\n".join(problems), file=sys.stderr)
    return 1 if problems or (stale and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
