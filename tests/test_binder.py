"""Binder's environment stays light (CPU torch) and in step with requirements.txt."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s#]+)", line.strip())
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def test_binder_uses_cpu_torch_and_the_same_versions():
    binder, book = pins(ROOT / "binder" / "requirements.txt"), pins(ROOT / "requirements.txt")
    assert binder["torch"] == book["torch"] + "+cpu"
    for name, version in binder.items():
        if name != "torch":
            assert book.get(name) == version, f"{name}: binder {version}, requirements.txt {book.get(name)}"
    lines = [line.strip() for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    assert "." in lines, "binder must install the book's helpers package"
