"""``mcp-ref demo`` (what ``make run`` runs): a real client against the echo example over stdio."""

import configparser
import importlib
import json
import os
import re
import select
import signal
import subprocess
import sys

import pytest

import mcp_ref

from .conftest import ROOT, default_sigint


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ARGS`` with this tree importable, its output captured (bounded by a timeout)."""
    return subprocess.run(
        [sys.executable, "-m", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_demo_talks_to_the_echo_server_and_shuts_it_down() -> None:
    # a real subprocess pair: bounded by a timeout, no sleeps; by default the client and the
    # echo server speak 2026-07-28, which has no initialize and no ping: the demo says neither
    done = run_module("mcp_ref.cli", "demo")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"launching: {sys.executable} -m mcp_ref.examples.echo"
    assert lines[1].startswith("server/discover: ") and lines[1].endswith("protocol 2026-07-28")
    assert not [line for line in lines if line.startswith(("initialize", "ping"))]
    assert any(line.startswith("tool: echo -- ") for line in lines)
    assert "tools/call echo -> hello from mcp_ref" in lines
    assert lines[-1] == "client closed; server process shut down"


def test_demo_speaks_an_older_revision_when_asked() -> None:
    done = run_module("mcp_ref.cli", "demo", "--protocol", "2025-11-25")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("initialize: ") and lines[1].endswith("protocol 2025-11-25")
    assert "ping: ok" in lines and not [line for line in lines if "server/discover" in line]
    assert "tools/call echo -> hello from mcp_ref" in lines
    assert lines[-1] == "session closed; server process shut down"
    refused = run_module("mcp_ref.cli", "demo", "--protocol", "2099-01-01")
    assert refused.returncode == 2 and "invalid choice" in refused.stderr


def test_make_run_cross_checks_the_everything_example_with_its_tools() -> None:
    # the main job: `mcp-ref check` on the everything example, with the config naming the
    # tools its checks need (the echo example's one tool left a third of them skipped);
    # it comes out clean (exit 0), and the output ends with one plain sentence
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nrun: ", 1)[1].splitlines()[1].strip()
    assert recipe.startswith(
        "@$(PY) -m mcp_ref.cli check --config $(DEMO_CONFIG) -- $(PY) -m mcp_ref.examples.everything;"
    )
    assert "DEMO_CONFIG := tests/crosscheck/everything.toml" in makefile
    assert "RUN_OK := All good: the example server passed every check above" in makefile
    config = str(ROOT / "tests" / "crosscheck" / "everything.toml")
    target = [sys.executable, "-m", "mcp_ref.examples.everything"]
    done = run_module("mcp_ref.cli", "check", "--config", config, "--", *target)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.splitlines()[-1]
    clean = r"0 MUST and 0 SHOULD violated, 0 other; checks: (\d+) passed, 0 failed, (\d+) skipped"
    counts = re.fullmatch(clean, summary)
    assert counts is not None, summary
    # most checks run (the echo example's one tool left a third of them skipped)
    assert int(counts[2]) * 20 <= int(counts[1]), summary


def test_an_unknown_command_is_a_usage_error() -> None:
    done = run_module("mcp_ref.cli", "nonsense")
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_version_names_the_package_and_the_protocol_revision() -> None:
    done = run_module("mcp_ref.cli", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"mcp-ref {mcp_ref.__version__} (MCP {mcp_ref.LATEST_PROTOCOL_VERSION})\n"


def test_python_dash_m_mcp_ref_is_the_command() -> None:
    assert run_module("mcp_ref", "--version").stdout == run_module("mcp_ref.cli", "--version").stdout
    done = run_module("mcp_ref", "nonsense")
    assert done.returncode == 2 and "mcp-ref: error: argument command: invalid choice" in done.stderr


def test_plain_make_lists_every_target() -> None:
    # `make` with no target explains itself instead of silently building .venv
    makefile = (ROOT / "Makefile").read_text()
    phony = next(line for line in makefile.splitlines() if line.startswith(".PHONY:")).split()[1:]
    done = subprocess.run(
        ["make", "-s", "-n", "-C", str(ROOT)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "-m venv" not in done.stdout and "pip install" not in done.stdout
    listed = subprocess.run(["make", "-s", "-C", str(ROOT)], capture_output=True, text=True, timeout=60, check=False)
    assert listed.returncode == 0, listed.stderr
    described = {line.split()[1] for line in listed.stdout.splitlines() if line.startswith("make ")}
    assert described == set(phony) - {"help"}


def test_the_package_metadata_matches_the_code() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    classifiers = cfg["metadata"]["classifiers"].split("\n")
    minimum = cfg["options"]["python_requires"].removeprefix(">=")
    assert f"Programming Language :: Python :: {minimum}" in classifiers
    # PEP 639: an SPDX expression, and no license classifier beside it (setuptools warns about those)
    assert cfg["metadata"]["license_expression"] == "MIT"
    assert not [c for c in classifiers if c.startswith("License ::")]
    # one version, in the code
    assert cfg["metadata"]["version"] == "attr: mcp_ref.__version__"
    # the console script names a function that exists
    script = cfg["options.entry_points"]["console_scripts"].strip()
    name, target = (part.strip() for part in script.split("="))
    module, func = target.split(":")
    assert name == "mcp-ref" and callable(getattr(importlib.import_module(module), func))


def test_the_echo_example_explains_itself() -> None:
    # someone who runs it by hand asks --help first: it says what it is instead of serving
    done = run_module("mcp_ref.examples.echo", "--help")
    assert done.returncode == 0 and "MCP server on stdin/stdout" in done.stdout, done.stderr


def test_ctrl_c_ends_a_stdio_server_quietly() -> None:
    # real process and signal: bounded by timeouts; "serving" is known from its first answer
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_ref.examples.echo"],
        preexec_fn=default_sigint,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no answer to initialize"
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 130 and err == b""


def test_demo_whose_reader_is_gone_exits_quietly_as_a_unix_tool_does() -> None:
    # `mcp-ref demo | head`: the reader closed before the demo writes (deterministic: the read
    # end is closed before it starts); no traceback, no "Exception ignored", the status a
    # process killed by SIGPIPE reports to a shell
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mcp_ref.cli", "demo"],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 128 + signal.SIGPIPE


def test_demo_whose_reader_goes_away_in_the_middle_of_a_session_exits_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the pipe breaking inside the client's session (whose nursery groups the error): the same
    from mcp_ref import cli

    detached: list[bool] = []
    lines: list[str] = []

    class ClosingSink(cli.TextSink):
        def __call__(self, line: str) -> None:
            if line.startswith("tool: "):
                raise BrokenPipeError(32, "Broken pipe")
            lines.append(line)

    monkeypatch.setattr(cli, "_detach_stdout", lambda: detached.append(True))
    assert cli._run_demo(None, ClosingSink()) == 128 + signal.SIGPIPE
    assert detached == [True]
    assert lines[1].startswith("server/discover: ") and not [line for line in lines if "tools/call" in line]


def test_demo_lets_other_errors_through(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_ref import cli

    class FailingSink(cli.TextSink):
        def __call__(self, line: str) -> None:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(cli, "_detach_stdout", lambda: None)
    with pytest.raises(OSError, match="Input/output error"):
        cli._run_demo(None, FailingSink())
