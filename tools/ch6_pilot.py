"""Chapter 6's pilot: re-derive the learning rate at which each arm is evaluated.

    python -m tools.ch6_pilot            # every optimizer; prints each arm's loss per rate
    python -m tools.ch6_pilot sgd        # one optimizer

Chapter 6 evaluates every arm (a multiplier of the logits and an initial size of
W_Q and W_K, at one key width d_k) at one learning rate per optimizer, chosen
before the evaluation on other seeds: this pilot trains each arm at every rate of
the ladder on the pilot seeds and applies the chapter's rule, the lowest final
loss (mean of the last RULE_STEPS steps, averaged over the seeds; a run that
diverged counts as infinitely bad). The design (arms, widths, ladder, seeds,
rule, and the picks ``PILOT``) is read from the notebook's design cell, so it is
stated once. The tool exits 1 if a pick differs from the notebook's, or if a
pick lies at an end of the ladder (the ladder would not bracket it).

It trains several thousand small runs: about 15 minutes of CPU per optimizer.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tools.notebook_format import NOTEBOOK_DIR, design_cell

if TYPE_CHECKING:
    import torch

NOTEBOOK = NOTEBOOK_DIR / "06_the_experiment.ipynb"
MARKER = "PILOT = "  # the design cell is the code cell that assigns PILOT


def design() -> dict:
    """The names the notebook's design cell defines (it holds constants only)."""
    return design_cell(NOTEBOOK, MARKER)


def final_losses(losses: torch.Tensor, rule_steps: int) -> torch.Tensor:
    """(R,) the mean loss of the last rule_steps steps; a diverged run (NaN) counts as infinite."""
    import torch  # where it computes: importing the tool costs no torch (tests/test_tools.py)

    value = losses[:, -rule_steps:].mean(dim=1)
    return torch.where(value.isnan(), torch.tensor(math.inf), value)


def pilot(optimizer: str, names: dict) -> dict[tuple[str, int], float]:
    """The rule's pick for every (arm, d_k), printing the mean final loss at each rate."""
    from helpers import train_recall_runs  # imports torch: only when the pilot trains

    arms, widths, ladder, seeds = names["ARMS"], names["D_KS_TRAIN"], names["LADDER"][optimizer], names["PILOT_SEEDS"]
    runs = [(arm, d_k, lr, seed) for arm in arms for d_k in widths for lr in ladder for seed in seeds]
    history = train_recall_runs(
        [arms[arm][0](d_k) for arm, d_k, _, _ in runs],
        [lr for _, _, lr, _ in runs],
        [seed for *_, seed in runs],
        optimizer,
        steps=names["STEPS"],
        d_k=[d_k for _, d_k, _, _ in runs],
        qk_gain=[arms[arm][1](d_k) for arm, d_k, _, _ in runs],
    )
    losses = final_losses(history.loss, names["RULE_STEPS"]).view(len(arms), len(widths), len(ladder), len(seeds))
    picks = {}
    print(f"\n{optimizer}: mean final loss over {len(seeds)} pilot seeds; * marks the pick")
    print(f"{'arm':8}{'d_k':>5}  " + "".join(f"{lr:>9g}" for lr in ladder))
    for i, arm in enumerate(arms):
        for j, d_k in enumerate(widths):
            picks[arm, d_k] = pick(f"{arm:8}{d_k:>5}", ladder, losses[i, j].mean(dim=1).tolist())
    return picks


def pick(label: str, ladder: list[float], mean_losses: list[float]) -> float:
    """The rule's pick: the rate of the lowest mean final loss. Prints one row of the pilot's table (* marks it)."""
    best = min(range(len(ladder)), key=lambda k: mean_losses[k])
    print(f"{label}  " + "".join(f"{v:>8.3g}{'*' if k == best else ' '}" for k, v in enumerate(mean_losses)))
    return ladder[best]


def compare(picks: dict[str, float], ladder: Sequence[float], stated: dict[str, float], name: str) -> bool:
    """Print each pick that lies at an end of ``ladder`` (it would not bracket the pick) or differs from the
    notebook's ``stated`` one, keyed alike; True if there is none."""
    good = True
    for key, lr in picks.items():
        if lr in (ladder[0], ladder[-1]):
            print(f"{key}: the pick {lr:g} is at an end of the ladder")
            good = False
        if lr != stated[key]:
            print(f"{key}: the pilot picks {lr:g}, the notebook's {name} says {stated[key]:g}")
            good = False
    print(f"every pick matches the notebook's {name}\n" if good else f"the notebook's {name} is stale\n")
    return good


def main() -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # no choices=: with nargs="*", argparse (3.11) checks the empty list or the default list as one choice
    parser.add_argument("optimizers", nargs="*", help="sgd, adam (default: both)")
    args = parser.parse_args()
    args.optimizers = args.optimizers or ["sgd", "adam"]
    if unknown := [name for name in args.optimizers if name not in ("sgd", "adam")]:
        parser.error(f"unknown optimizer {unknown[0]!r} (choose from 'sgd', 'adam')")
    names = design()
    torch.set_num_threads(1)  # small matmuls: one thread is fastest (helpers.train_recall_runs)
    good = True
    for optimizer in args.optimizers:
        picks = {f"{optimizer} {arm} d_k={d_k}": lr for (arm, d_k), lr in pilot(optimizer, names).items()}
        stated = {
            f"{optimizer} {arm} d_k={d_k}": rates[names["D_KS_TRAIN"].index(d_k)]
            for arm, rates in names["PILOT"][optimizer].items()
            for d_k in names["D_KS_TRAIN"]
        }
        good &= compare(picks, names["LADDER"][optimizer], stated, "PILOT")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
