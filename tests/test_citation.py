"""The project's name, repository and version are spelled once (``_config.yml``, ``pyproject.toml``);
CITATION.cff and the licenses say the same."""

from __future__ import annotations

import re

import yaml

from tools.notebook_format import ROOT

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def test_citation_names_the_project_and_repository_of_the_config():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert [author["name"] for author in citation["authors"]] == [CONFIG["author"]]
    assert citation["repository-code"] == CONFIG["repository"]["url"]
    assert citation["title"].startswith(CONFIG["title"])
    assert version and citation["version"] == version.group(1)


def test_licenses_name_the_same_holder():
    holder = f"{CONFIG['copyright']} {CONFIG['author']}"
    assert f"Copyright (c) {holder}" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert f"© {holder}" in (ROOT / "LICENSE-CONTENT.md").read_text(encoding="utf-8")
