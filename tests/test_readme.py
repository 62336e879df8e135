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

import pytest
import trio

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


def _first_server(tmp_path: Path) -> Path:
    """The README's first example server (``echo_server.py``), saved as written."""
    name, code, _ = next(s for s in snippets() if s[0])
    assert name == "echo_server.py"
    path = tmp_path / name
    path.write_text(code)
    return path


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_the_first_example_serves_both_eras_to_our_client(tmp_path: Path, era: str) -> None:
    """The README's first server, unchanged, answers a 2025-11-25 client (initialize, a
    session) and a 2026-07-28 one (every request standing alone) on the same stdio pipe:
    the era is chosen by how the client opens, never by the application's code."""
    from mcp_ref import connect

    script = _first_server(tmp_path)
    with trio.fail_after(60):
        async with connect([sys.executable, str(script)], era=era, env=_env()) as client:
            assert client.protocol_version == ("2025-11-25" if era == "legacy" else "2026-07-28")
            assert client.server_info is not None and client.server_info.name == "echo-demo"
            result = await client.call_tool("echo", {"text": "hi"})
            assert result.text == "hi"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_first_example_serves_the_official_sdk_client(tmp_path: Path, mode: str) -> None:
    """The same server, unchanged, for the official Python SDK's client (mcp 2.3.0) in its
    2025 handshake mode and pinned to 2026-07-28."""
    mcp = pytest.importorskip("mcp", reason="the official SDK is in the test extra (pip install -e '.[test]')")

    script = _first_server(tmp_path)
    params = mcp.StdioServerParameters(command=sys.executable, args=[str(script)], env=_env())
    with trio.fail_after(60):
        async with mcp.Client(params, mode=mode) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            assert [c.text for c in result.content] == ["hi"]
            assert not result.is_error


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}
