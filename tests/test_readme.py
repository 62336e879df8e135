"""README.md's Python snippets run as written (a user copies them first).

Blocks run in order in one fresh directory. A block whose first line is
``# name.py`` is saved under that name for later blocks to use; every other
block is run with the interpreter under test, and a ``text`` block right after
it is its exact output.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_FILE_NAME = re.compile(r"# (\w+\.py)\n")


def snippets() -> list[tuple[str, str, str | None]]:
    """(file name or "", code, expected output or None) per Python block."""
    blocks = [(m.group(1), m.group(2)) for m in _BLOCK.finditer((ROOT / "README.md").read_text())]
    found: list[tuple[str, str, str | None]] = []
    for i, (lang, code) in enumerate(blocks):
        if lang != "python":
            continue
        saved = _FILE_NAME.match(code)
        following = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
        expected = following[1] if following[0] == "text" else None
        found.append((saved.group(1) if saved else "", code, expected))
    return found


def test_the_readme_has_runnable_snippets() -> None:
    kinds = [name or "run" for name, _, _ in snippets()]
    assert "run" in kinds and "echo_server.py" in kinds, kinds


def test_the_readme_snippets_run_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, code, expected in snippets():
        if name:
            (tmp_path / name).write_text(code)
            continue
        # real processes and real time: bounded by a timeout, no sleeps
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, f"{code}\n--- stderr:\n{done.stderr}"
        assert done.stderr == "", done.stderr
        if expected is not None:
            assert done.stdout == expected
