"""Chapter 8's pilot: re-derive the learning rate of the cosine-attention model at each width.

    python -m tools.ch8_pilot

Chapter 8 compares the recall model with cosine attention and a learned
temperature (``helpers.train_cosine_runs``) with chapter 6's scaled model, each
at its own Adam rate. The scaled model's rates are chapter 6's picks; this pilot
picks the cosine model's by chapter 6's rule: every rate of the ladder on the
pilot seeds, the lowest final loss (mean of the last RULE_STEPS steps, averaged
over the seeds; a diverged run counts as infinitely bad). The design is read
from the notebook's design cell (the code cell that assigns COSINE_PILOT), so it
is stated once. The tool exits 1 if a pick differs from the notebook's, or lies
at an end of the ladder (the ladder would not bracket it).

It trains 150 small runs: about 2 minutes of CPU.
"""

from __future__ import annotations

import sys

from tools.ch6_pilot import final_losses
from tools.notebook_format import NOTEBOOK_DIR, design_cell

NOTEBOOK = NOTEBOOK_DIR / "08_after_sqrt_dk.ipynb"
MARKER = "COSINE_PILOT = "  # the design cell is the code cell that assigns COSINE_PILOT


def design() -> dict:
    """The names the notebook's design cell defines (it holds constants only)."""
    return design_cell(NOTEBOOK, MARKER)


def pilot(names: dict) -> dict[int, float]:
    """The rule's pick at every width, printing the mean final loss at each rate."""
    from helpers import train_cosine_runs  # imports torch: only when the pilot trains

    ladder, seeds = list(names["COSINE_LADDER"]), list(names["PILOT_SEEDS"])
    picks = {}
    print(f"cosine attention: mean final loss over {len(seeds)} pilot seeds; * marks the pick")
    print(f"{'d_k':>5}  " + "".join(f"{lr:>9g}" for lr in ladder))
    for d_k in names["COSINE_WIDTHS"]:
        history = train_cosine_runs(
            [lr for lr in ladder for _ in seeds],
            [seed for _ in ladder for seed in seeds],
            d_k,
            steps=names["CH6_STEPS"],
            **names["COSINE_T"],
        )
        mean = final_losses(history.loss, names["RULE_STEPS"]).view(len(ladder), len(seeds)).mean(dim=1)  # (rates,)
        best = int(mean.argmin())
        picks[d_k] = ladder[best]
        print(f"{d_k:>5}  " + "".join(f"{v:>8.3g}{'*' if k == best else ' '}" for k, v in enumerate(mean.tolist())))
    return picks


def main() -> int:
    import torch

    names = design()
    torch.set_num_threads(1)  # small matmuls: one thread is fastest
    ladder, failed = names["COSINE_LADDER"], False
    for d_k, lr in pilot(names).items():
        if lr in (ladder[0], ladder[-1]):
            print(f"d_k={d_k}: the pick {lr:g} is at an end of the ladder")
            failed = True
        if lr != names["COSINE_PILOT"][d_k]:
            print(f"d_k={d_k}: the pilot picks {lr:g}, the notebook says {names['COSINE_PILOT'][d_k]:g}")
            failed = True
    print("\nthe notebook's COSINE_PILOT is stale" if failed else "\nevery pick matches the notebook's COSINE_PILOT")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
