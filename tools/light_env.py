"""A kernel of the learner's light environment, made in seconds from the book's own packages.

The light environment is what Binder and ``make lab`` install: ``binder/requirements.txt``
(torch's CPU build, matplotlib, numpy, ipykernel, JupyterLab) and nothing of the book's
authoring and test stack. Installing it for every test run would take minutes, so this
builds an equivalent: a fresh virtual environment without packages, and beside it a folder
of links to exactly the installed distributions that those requirements need, dependencies
included (read from their metadata). A notebook that imports anything else (nbformat, yaml,
pytest, an editable ``helpers``) fails in it, as it would on Binder or Colab.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools.notebook_format import QUIET_KERNEL

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder" / "requirements.txt"
# what a kernel needs of the light environment; JupyterLab (the front end) runs no notebook code
KERNEL_PACKAGES = ("torch", "matplotlib", "numpy", "ipykernel")
# pip itself, and what it builds helpers with, so that the setup cell's `%pip install` works offline
INSTALL_TOOLS = ("pip", "setuptools")


def binder_packages() -> list[str]:
    names = []
    for line in BINDER.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)\s*(==|>=|<=|~=|$)", line.strip())
        if match and not line.strip().startswith(("-", "#", ".")):
            names.append(match.group(1))
    return names


def closure(names: tuple[str, ...] | list[str]) -> dict[str, metadata.Distribution]:
    """The installed distributions ``names`` need, with their dependencies (markers evaluated)."""
    environment = default_environment()
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            found[name] = distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency this machine does not have: the light one would not either
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({**environment, "extra": ""}):
                todo.append(requirement.name)
    return found


def top_level(distribution: metadata.Distribution) -> set[str]:
    """The entries a distribution puts into site-packages (packages, modules, its .dist-info)."""
    entries = set()
    for file in distribution.files or []:
        parts = Path(str(file)).parts
        if parts and parts[0] not in ("..", "__pycache__") and not parts[0].endswith(".pth"):
            entries.add(parts[0])
    return entries


def make_light_environment(tmp: Path, packages: tuple[str, ...] | None = None) -> str:
    """A fresh virtual environment under ``tmp`` that sees only binder's packages (links to this
    machine's installed copies); return its interpreter."""
    wanted = list(packages or KERNEL_PACKAGES) + list(INSTALL_TOOLS)
    assert set(packages or KERNEL_PACKAGES) <= set(binder_packages()), (
        "the light environment has only binder's packages"
    )
    venv = tmp / "light"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    shelf = tmp / "light-packages"
    shelf.mkdir()
    for distribution in closure(wanted).values():
        base = Path(distribution.locate_file(""))
        for entry in top_level(distribution):
            link = shelf / entry
            if not link.exists() and (base / entry).exists():
                link.symlink_to(base / entry)
    # a path added by a .pth line does not run that directory's own .pth files: the book
    # environment's editable install of helpers stays invisible
    (Path(purelib) / "light_packages.pth").write_text(f"{shelf}\n")
    return python


@contextmanager
def light_kernel(
    tmp: Path, packages: tuple[str, ...] | None = None, python: str | None = None
) -> Iterator[tuple[str, str]]:
    """A kernel spec (its name) and the interpreter of a fresh light environment under ``tmp``; given
    ``python``, of that interpreter instead (an environment installed by hand from binder's list)."""
    python = python or make_light_environment(tmp, packages)
    kernels = tmp / "jupyter" / "kernels" / "light"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}", *QUIET_KERNEL],
                "display_name": "light",
                "language": "python",
            }
        )
    )
    saved = {
        key: os.environ.get(key) for key in ("JUPYTER_PATH", "PYTHONPATH", "PIP_NO_BUILD_ISOLATION", "PIP_NO_INDEX")
    }
    os.environ["JUPYTER_PATH"] = str(tmp / "jupyter")
    os.environ.pop("PYTHONPATH", None)  # nothing may reach helpers but the setup cell
    # pip installs helpers from its wheel and nothing else, offline ("0" is pip's spelling of "no isolation")
    os.environ["PIP_NO_BUILD_ISOLATION"] = "0"
    os.environ["PIP_NO_INDEX"] = "1"
    try:
        yield "light", python
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
