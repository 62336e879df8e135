"""The guides' examples (docs/examples/*.py, shown with literalinclude) run as a user
would run them and print exactly the output the guide shows after them."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"

# a literalinclude of an example, then (after some prose) the text block of what it prints
_SHOWN = re.compile(
    r"^\.\. literalinclude:: examples/(\w+\.py)\n(?:   :[^\n]*\n)*.*?^\.\. code-block:: text\n\n((?:   [^\n]*\n)+)",
    re.MULTILINE | re.DOTALL,
)


def shown() -> dict[str, str]:
    """example file name -> the output its guide shows"""
    found = {}
    for page in sorted(DOCS.glob("*.rst")):
        for m in _SHOWN.finditer(page.read_text()):
            output = "".join(line[3:] + "\n" for line in m.group(2).rstrip("\n").split("\n"))
            found[m.group(1)] = output
    return found


def test_every_example_is_shown_with_its_output() -> None:
    assert sorted(shown()) == sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert {"tutorial.py", "http_client.py", "elicitation.py", "tasks.py", "limits.py"} <= set(shown())


@pytest.mark.parametrize("name", sorted(shown()))
def test_the_example_prints_what_its_guide_shows(name: str, tmp_path: Path) -> None:
    # real processes on real time (loopback only), bounded by a timeout
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == shown()[name]
