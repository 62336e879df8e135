"""The everything example refuses to start as a replica it could not be, in one line saying why."""

import socket

import pytest

from mcp_ref.basic.patterns.mrtr import STATE_KEY_ENV
from mcp_ref.examples.everything import main

#: a port nothing listens on (bound, never listening: a connection is refused at once)
DEAD_URL = "postgresql://mcp:hunter2@127.0.0.1:{port}/mcp?table=mcp_tasks&sweep=5"


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    (line,) = capsys.readouterr().err.strip().splitlines()  # one line, not a traceback
    assert line.startswith("cannot start: ")
    return line


def test_a_short_state_key_is_one_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STATE_KEY_ENV, "s3cret")
    assert main(["--http", "--port", "1"]) == 1
    assert one_line(capsys) == (
        "cannot start: MCP_REF_STATE_KEY: a requestState secret has at least 16 bytes (this one has 6)"
    )


@pytest.mark.parametrize("key", [None, "", " , "])
def test_a_postgres_task_db_without_the_shared_state_key_refuses_to_start(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, key: str | None
) -> None:
    # (a key of this process only: the other replicas could not open the requestState it seals)
    if key is None:
        monkeypatch.delenv(STATE_KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(STATE_KEY_ENV, key)
    assert main(["--http", "--port", "1", "--task-db", DEAD_URL.format(port=1)]) == 1
    assert "one of several replicas: set MCP_REF_STATE_KEY" in one_line(capsys)


def test_an_unreachable_database_at_start_says_why(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg 3) is not installed")
    monkeypatch.setenv(STATE_KEY_ENV, "a-shared-key-of-the-replicas")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        assert main(["--task-db", DEAD_URL.format(port=port)]) == 1
    line = one_line(capsys)
    # the cause, not only the client's "the task store is unavailable"; the password is not shown
    assert f"cannot open the task store at postgresql://mcp:***@127.0.0.1:{port}/mcp: " in line
    assert "refused" in line and "hunter2" not in line


def test_a_misspelled_url_parameter_says_which(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg 3) is not installed")
    monkeypatch.setenv(STATE_KEY_ENV, "a-shared-key-of-the-replicas")
    assert main(["--task-db", DEAD_URL.format(port=1).replace("sweep=", "swep=")]) == 1
    line = one_line(capsys)
    assert 'invalid URI query parameter: "swep"' in line and "table=, sweep=" in line and "hunter2" not in line
