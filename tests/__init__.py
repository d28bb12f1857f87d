"""What several test modules share."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXTENSIONS = Path(__file__).resolve().parent.parent / "book" / "_ext"


def extension(name: str) -> ModuleType:
    """The book's Sphinx extension ``book/_ext/<name>.py``, loaded from its file (Sphinx puts that folder on
    its path; a test does not)."""
    spec = importlib.util.spec_from_file_location(name, EXTENSIONS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
