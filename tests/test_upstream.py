"""The version guards of the patches of myst-nb's and Sphinx's internals (tools/upstream.py)."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from tools.notebook_format import ROOT
from tools.upstream import UpstreamChanged, require

GUARD = re.compile(r'require\(\s*"([\w-]+)",\s*"([\w.]+)"')
PIN = re.compile(r"^([\w-]+)==([\w.]+)", re.M)


def test_a_guard_passes_at_the_checked_release_and_stops_at_another():
    require("myst-nb", version("myst-nb"), "a test", "nowhere")
    with pytest.raises(UpstreamChanged, match=r"internals of myst-nb as they are in release 0\.0\.1.*Re-read the code"):
        require("myst-nb", "0.0.1", "a test", "the code")


def guards() -> list[tuple[str, str, str]]:
    """(file, distribution, release checked) for every guard in the extensions and the tests."""
    found = []
    for path in [*(ROOT / "book" / "_ext").glob("*.py"), *(ROOT / "tests").glob("*.py")]:
        if path.name != "test_upstream.py":
            found += [(path.name, *match) for match in GUARD.findall(path.read_text(encoding="utf-8"))]
    return found


def test_every_patch_is_guarded_at_the_pinned_release():
    pins = dict(PIN.findall((ROOT / "requirements.txt").read_text(encoding="utf-8")))
    found = guards()
    assert {name for name, _, _ in found} >= {
        "book_slides.py",
        "translated_glue.py",
        "site_tweaks.py",
        "chapter_numbers.py",
        "zh_edition.py",
        "build_speed.py",
    }
    stale = [
        f"{name}: {dist} {checked}, pinned {pins.get(dist)}"
        for name, dist, checked in found
        if pins.get(dist) != checked
    ]
    assert not stale, "a patch checked against another release than requirements.txt pins:\n" + "\n".join(stale)
