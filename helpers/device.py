"""Where the notebooks compute, and how they stay reproducible."""

from __future__ import annotations

import os
import random

import torch

from helpers import _validate as check

__all__ = ["effective_seed", "get_device", "seed_everything"]


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def get_device() -> torch.device:
    """The accelerator to compute on: CUDA, then Apple MPS, then the CPU. ``BOOK_DEVICE`` (``BOOK_DEVICE=cpu``)
    forces a device; asking for one that is not there raises ``ValueError``."""
    forced = os.environ.get("BOOK_DEVICE", "").strip()
    if forced:
        try:
            device = torch.device(forced)
        except RuntimeError:
            raise ValueError(f"BOOK_DEVICE={forced!r} is not a torch device name (try cpu, cuda or mps)") from None
        available = {"cpu": True, "cuda": torch.cuda.is_available(), "mps": _mps_available()}
        if not available.get(device.type, False):
            raise ValueError(f"BOOK_DEVICE={forced!r} asks for a device that this machine does not have")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def effective_seed(seed: int) -> int:
    """The seed the generators receive for ``seed``: itself, shifted by ``BOOK_SEED_OFFSET`` (an int) where set.

    A GPU draws other numbers than a CPU from one seed, so a claim must hold on other draws too: the offset lets a
    CPU check that (``make portability``, point ``seed-shift``).
    """
    seed = check.seed("seed", seed)
    offset = os.environ.get("BOOK_SEED_OFFSET", "").strip()
    if not offset:
        return seed
    try:
        shift = int(offset)
    except ValueError:
        raise ValueError(f"BOOK_SEED_OFFSET={offset!r} is not an int") from None
    return (seed + shift) % 2**32


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's (when installed) and torch's generators (all devices) with
    :func:`effective_seed`'s ``seed`` (``BOOK_SEED_OFFSET`` shifts it)."""
    seed = effective_seed(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:  # helpers declares no dependencies; numpy is optional
        pass
    else:
        numpy.random.seed(seed)
    torch.manual_seed(seed)  # seeds CUDA and MPS as well
