"""Chapter 8's pilots: re-derive the learning rates that chapter 8's design cells state.

    python -m tools.ch8_pilot           (both)
    python -m tools.ch8_pilot cosine    (about 2 minutes of CPU: 150 small runs)
    python -m tools.ch8_pilot sink      (about 40 s: 40 small runs)

Each arm of chapter 8's trained comparisons gets its own Adam rate, picked by
chapter 6's rule: every rate of a ladder fixed before the runs, on the pilot
seeds; the lowest final loss (mean of the last RULE_STEPS steps, averaged over
the seeds; a diverged run counts as infinitely bad) wins.

- cosine: the recall model with cosine attention and a learned temperature
  (``helpers.train_cosine_runs``) at each width; the scaled control keeps chapter
  6's picks. Its design cell assigns COSINE_PILOT.
- sink: the model with and without a learned sink logit on recall with queries
  that have no answer (``helpers.train_sink``). Its design cell assigns SINK_PILOT
  and reads the seeds and RULE_STEPS of the cosine design cell.

The designs are read from the notebook's design cells, so each is stated once. The
tool exits 1 if a pick differs from the notebook's, or lies at an end of its
ladder (the ladder would not bracket it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from tools.ch6_pilot import compare, final_losses, pick
from tools.notebook_format import NOTEBOOK_DIR, design_cell

NOTEBOOK = NOTEBOOK_DIR / "08_after_sqrt_dk.ipynb"
MARKER = "COSINE_PILOT = "  # the cosine design cell is the code cell that assigns COSINE_PILOT
SINK_MARKER = "SINK_PILOT = "  # the sink design cell assigns SINK_PILOT


def design() -> dict:
    """The names the cosine design cell defines (it holds constants only)."""
    return design_cell(NOTEBOOK, MARKER)


def sink_design() -> dict:
    """The names the sink design cell defines, with the cosine design cell's that it reads."""
    return design_cell(NOTEBOOK, SINK_MARKER, design())


def cosine_pilot(names: dict) -> dict[str, float]:
    """The rule's pick at every width (keyed by the width's name, as the table prints it)."""
    from helpers import train_cosine_runs  # imports torch: only when the pilot trains

    ladder, seeds = list(names["COSINE_LADDER"]), list(names["PILOT_SEEDS"])
    picks = {}
    print(f"cosine attention: mean final loss over {len(seeds)} pilot seeds; * marks the pick")
    print(f"{'d_k':>8}  " + "".join(f"{lr:>9g}" for lr in ladder))
    for d_k in names["COSINE_WIDTHS"]:
        history = train_cosine_runs(
            [lr for lr in ladder for _ in seeds],
            [seed for _ in ladder for seed in seeds],
            d_k,
            steps=names["CH6_STEPS"],
            **names["COSINE_T"],
        )
        mean = final_losses(history.loss, names["RULE_STEPS"]).view(len(ladder), len(seeds)).mean(dim=1)  # (rates,)
        picks[str(d_k)] = pick(f"{d_k:>8}", ladder, mean.tolist())
    return picks


def sink_pilot(names: dict) -> dict[str, float]:
    """The rule's pick for each arm (with and without the sink logit)."""
    import torch

    from helpers import train_sink  # imports torch: only when the pilot trains

    ladder, seeds = list(names["SINK_LADDER"]), list(names["PILOT_SEEDS"])
    picks = {}
    print(f"sink logit: mean final loss over {len(seeds)} pilot seeds; * marks the pick")
    print(f"{'arm':>8}  " + "".join(f"{lr:>9g}" for lr in ladder))
    for arm, sink in names["SINK_ARMS"].items():
        mean = [
            final_losses(
                torch.tensor(
                    [train_sink(sink, lr, seed, names["SINK_STEPS"], names["NO_ANSWER_SHARE"]).loss for seed in seeds]
                ),
                names["RULE_STEPS"],
            )
            .mean()
            .item()
            for lr in ladder
        ]
        picks[arm] = pick(f"{arm:>8}", ladder, mean)
    return picks


PILOTS: dict[str, tuple[Callable[[], dict], Callable[[dict], dict], str, str]] = {
    "cosine": (design, cosine_pilot, "COSINE_LADDER", "COSINE_PILOT"),
    "sink": (sink_design, sink_pilot, "SINK_LADDER", "SINK_PILOT"),
}


def main(argv: list[str]) -> int:
    import torch

    chosen = argv or list(PILOTS)
    if any(name not in PILOTS for name in chosen):
        print(f"usage: python -m tools.ch8_pilot [{' | '.join(PILOTS)}]")
        return 2
    torch.set_num_threads(1)  # small matmuls: one thread is fastest
    good = True
    for name in chosen:
        read_design, run, ladder, stated = PILOTS[name]
        names = read_design()
        good &= compare(run(names), names[ladder], {str(key): lr for key, lr in names[stated].items()}, stated)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
