"""The documentation: the Sphinx build has no warnings, the reference covers every
public name, and the changelog's news fragments are well named and render."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import mcp_ref

from .conftest import ROOT

DOCS = ROOT / "docs"
FRAGMENTS = ROOT / "newsfragments"


def test_the_docs_build_without_warnings(tmp_path: Path) -> None:
    # what `make docs` runs; -W turns every warning (a broken docstring, a missing page) into a failure
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html", str(DOCS), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    reference = (tmp_path / "reference.html").read_text()
    assert 'id="mcp_ref.Server.tool"' in reference  # autodoc rendered the members, not just the names


def test_every_public_name_is_in_the_reference() -> None:
    documented = set(re.findall(r"^\.\. auto\w+:: (\w+)", (DOCS / "reference.rst").read_text(), re.MULTILINE))
    assert documented == set(mcp_ref.__all__)


def fragment_types() -> list[str]:
    config = tomllib.loads((ROOT / "towncrier.toml").read_text())["tool"]["towncrier"]
    assert config["directory"] == "newsfragments" and config["filename"] == "CHANGELOG.rst"
    return [t["directory"] for t in config["type"]]


def test_news_fragments_are_named_by_issue_and_type() -> None:
    name = re.compile(rf"(\d+|\+[\w-]+)\.({'|'.join(fragment_types())})(\.\d+)?\.rst")
    fragments = [p.name for p in FRAGMENTS.iterdir() if p.name != "README.rst"]
    assert [f for f in fragments if not name.fullmatch(f)] == []


def test_the_changelog_draft_renders_every_fragment(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "towncrier", "build", "--draft", "--version", "9.9.9"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "mcp_ref 9.9.9" in done.stdout
    for path in FRAGMENTS.glob("*.rst"):
        if path.name != "README.rst" and ".misc" not in path.name:
            first_words = " ".join(path.read_text().split()[:4])
            assert first_words in " ".join(done.stdout.split()), path.name
