"""``mcp-ref tap``: a real client through the tap to a real server, judged live, traffic logged.

Stdio: our client launches ``mcp-ref tap -- SERVER`` as its server (real
processes, bounded by timeouts, no sleeps). HTTP: the tap in-process between
our HTTP client and a server.
"""

import io
import json
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import h11
import pytest
import trio
import trio.testing

from mcp_ref.crosscheck.http_tap import serve_http_tap
from mcp_ref.crosscheck.judge import judge_file
from mcp_ref.crosscheck.observer import Direction
from mcp_ref.crosscheck.tap import Tap
from mcp_ref.crosscheck.traffic import read_traffic
from mcp_ref.examples.everything import build_server
from mcp_ref.session.client import open_stdio_client
from mcp_ref.session.http import open_http_client, serve_http

from ..basic.transports.test_streamable_http import raw

CORPUS = Path(__file__).parent / "corpus" / "server.py"


async def _progress(progress: float, total: float | None, message: str | None) -> None:
    pass


@pytest.mark.req("basic/utilities/progress#4")
async def test_the_stdio_tap_passes_everything_through_and_judges_it_live(tmp_path: Path) -> None:
    log, report = tmp_path / "traffic.jsonl", tmp_path / "report.json"
    stderr: list[str] = []
    tap = ["-m", "mcp_ref.cli", "tap", "--log", str(log), "--json", str(report), "--"]
    server = [sys.executable, str(CORPUS), "--break", "progress-decreasing"]
    async with open_stdio_client(sys.executable, [*tap, *server], stderr=stderr.append, era="legacy") as client:
        with trio.fail_after(30):
            result = await client.call_tool("progress", {}, progress=_progress)
            assert result.content[0].text == "progressed"  # type: ignore[union-attr]
            await client.ping()
    # findings on stderr as they happened, the summary at the end
    live = [line for line in stderr if line.startswith("mcp-ref tap: MUST")]
    assert live and all("basic/utilities/progress#4" in line for line in live)
    assert stderr[-1].startswith("mcp-ref tap: 1 MUST and 0 SHOULD")
    # the report, and the traffic: judged again offline, it says the same
    data = json.loads(report.read_text())
    assert [f["requirement"] for f in data["findings"]] == ["basic/utilities/progress#4"]
    records, header = read_traffic(log.read_text())
    assert header["transport"] == "stdio" and header["target"].endswith("--break progress-decreasing")
    assert {r.direction for r in records} == {Direction.TO_SERVER, Direction.TO_CLIENT}
    assert [f.requirement for f in judge_file(str(log)).findings] == ["basic/utilities/progress#4"]


async def test_the_stdio_tap_is_transparent_for_a_correct_server(tmp_path: Path) -> None:
    stderr: list[str] = []
    args = ["-m", "mcp_ref.cli", "tap", "--", sys.executable, "-m", "mcp_ref.examples.echo"]
    async with open_stdio_client(sys.executable, args, stderr=stderr.append, era="legacy") as client:
        with trio.fail_after(30):
            assert [t.name for t in await client.list_all_tools()] == ["echo"]
            result = await client.call_tool("echo", {"text": "through the tap"})
            assert result.content[0].text == "through the tap"  # type: ignore[union-attr]
    assert [line for line in stderr if line.startswith("mcp-ref tap:")] == [
        "mcp-ref tap: 0 MUST and 0 SHOULD violated, 0 other; checks: 0 passed, 0 failed, 0 skipped"
    ]


async def test_the_http_tap_between_our_client_and_server() -> None:
    log = io.StringIO()
    tap = Tap("everything", "http", log=log)
    async with trio.open_nursery() as nursery:
        server = build_server(nursery)
        info = await nursery.start(lambda task_status: serve_http(server, task_status=task_status))
        url = await nursery.start(serve_http_tap, "127.0.0.1", 0, info.url, tap)
        with trio.fail_after(30):
            async with open_http_client(url, era="legacy") as client:
                await client.ping()
                result = await client.call_tool("progress_emitter", {"count": 3}, progress=_progress)
                assert result.content[0].text == "sent 3 progress notifications"  # type: ignore[union-attr]
                await client.set_logging_level("error")
                await client.call_tool("log_levels", {})
        await info.aclose()
        nursery.cancel_scope.cancel()
    report = tap.end()
    assert report.findings == [], report.to_text()
    records, header = read_traffic(log.getvalue())
    assert header["transport"] == "http"
    methods = [json.loads(r.data).get("method") for r in records if r.http is None]
    assert "notifications/progress" in methods and "tools/call" in methods


async def _bad_upstream(stream: trio.SocketStream) -> None:
    """Answers every POST 200 with a JSON body: right for a request, wrong for a notification."""
    conn = h11.Connection(h11.SERVER)
    body = b""
    while not isinstance(event := conn.next_event(), h11.EndOfMessage):
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
    message = json.loads(body)
    answer = json.dumps({"jsonrpc": "2.0", "id": message.get("id", 0), "result": {}}).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(answer)))]
    await stream.send_all(conn.send(h11.Response(status_code=200, headers=headers)) or b"")
    await stream.send_all((conn.send(h11.Data(data=answer)) or b"") + (conn.send(h11.EndOfMessage()) or b""))
    await stream.aclose()


@pytest.mark.req("basic/transports#18")
async def test_the_http_tap_judges_what_the_transport_says() -> None:
    tap = Tap("bad", "http")
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(trio.serve_tcp, _bad_upstream, 0)
        port = listeners[0].socket.getsockname()[1]
        url = await nursery.start(serve_http_tap, "127.0.0.1", 0, f"http://127.0.0.1:{port}/mcp", tap)
        note: Any = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        status, _, body = await raw(url, "POST", {"accept": "application/json, text/event-stream"}, note)
        assert status == 200 and json.loads(body)["result"] == {}  # passed through unchanged
        # the tap may still be judging the body it forwarded: let it finish before stopping it
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    # the HTTP status; the response it carried answers no request (and the client's side of it,
    # a notification before initialize, is its own finding)
    server_side = {f.requirement for f in tap.end().findings if f.party == "server"}
    assert server_side == {"basic/transports#18", "basic/index#7"}


@pytest.mark.req("basic/transports#18")
def test_a_202_answer_with_a_body_is_a_finding() -> None:
    from mcp_ref.crosscheck.http_rules import HttpJudge

    judge = HttpJudge()
    found = judge.end("POST", 202, "application/json", b'{"jsonrpc":"2.0"}', is_request=False, first_event=None)
    assert [(f.requirement, f.party) for f in found] == [("basic/transports#18", "server")]
    assert "a 202 answer carried a body" in found[0].message
    assert judge.end("POST", 202, "", b"", is_request=False, first_event=None) == []


async def test_the_http_tap_answers_502_when_the_server_cannot_be_reached() -> None:
    import socket

    with socket.socket() as s:  # a loopback port with nothing listening on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tap, err = Tap("gone", "http"), io.StringIO()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_http_tap, err=err), "127.0.0.1", 0, f"http://127.0.0.1:{port}/mcp", tap)
        ping: Any = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        status, _, body = await raw(url, "POST", {"accept": "application/json, text/event-stream"}, ping)
        nursery.cancel_scope.cancel()
    assert status == 502 and f"cannot reach the server at 127.0.0.1:{port}" in body.decode()
    assert f"mcp-ref tap: cannot reach the server at 127.0.0.1:{port}" in err.getvalue()


async def test_the_http_tap_forwards_to_an_https_server_it_is_told_to_trust() -> None:
    import trustme

    from ..basic.transports.test_https import client_context, server_context

    ca, log = trustme.CA(), io.StringIO()
    tap, untrusted, err = Tap("everything over TLS", "http", log=log), Tap("untrusted", "http"), io.StringIO()
    async with trio.open_nursery() as nursery:
        server = build_server(nursery)
        context = server_context(ca)
        info = await nursery.start(lambda task_status: serve_http(server, ssl_context=context, task_status=task_status))
        assert info.url.startswith("https://")
        trusting = partial(serve_http_tap, ssl_context=client_context(ca))
        url = await nursery.start(trusting, "127.0.0.1", 0, info.url, tap)
        assert url.startswith("http://127.0.0.1:")  # the client side stays plain, readable HTTP
        with trio.fail_after(30):
            async with open_http_client(url, era="legacy") as client:
                result = await client.call_tool("progress_emitter", {"count": 2}, progress=_progress)
                assert result.content[0].text == "sent 2 progress notifications"  # type: ignore[union-attr]
        # the system's trust store does not know the test's CA: 502, saying why
        url = await nursery.start(partial(serve_http_tap, err=err), "127.0.0.1", 0, info.url, untrusted)
        ping: Any = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        status, _, body = await raw(url, "POST", {"accept": "application/json, text/event-stream"}, ping)
        await info.aclose()
        nursery.cancel_scope.cancel()
    assert tap.end().findings == []
    methods = [json.loads(r.data).get("method") for r in read_traffic(log.getvalue())[0] if r.http is None]
    assert "tools/call" in methods and "notifications/progress" in methods  # judged in clear
    assert status == 502 and f"TLS handshake with https://{info.url.split('/')[2]} failed" in body.decode()
    assert "CERTIFICATE_VERIFY_FAILED" in err.getvalue()


async def test_tap_cafile_from_the_command_line(tmp_path: Path) -> None:
    import signal

    import trustme

    from ..basic.transports.test_https import server_context

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    report = tmp_path / "report.json"
    async with trio.open_nursery() as nursery:
        server = build_server(nursery)
        context = server_context(ca)
        info = await nursery.start(lambda task_status: serve_http(server, ssl_context=context, task_status=task_status))
        argv = [sys.executable, "-m", "mcp_ref.cli", "tap", "--listen", "127.0.0.1:0", "--cafile"]
        argv += [str(tmp_path / "ca.pem"), "--json", str(report), info.url]
        tap = await trio.lowlevel.open_process(argv, stderr=subprocess.PIPE)
        try:
            with trio.fail_after(30):
                assert tap.stderr is not None
                said = b""
                while b"(Ctrl-C stops)" not in said:
                    said += await tap.stderr.receive_some(4096)
                url = said.decode().split("listening on ")[1].split(",")[0]
                async with open_http_client(url, era="legacy") as client:
                    await client.ping()
                tap.send_signal(signal.SIGTERM)
                assert await tap.wait() == 0
        finally:
            if tap.returncode is None:
                tap.kill()
                await tap.wait()
        await info.aclose()
        nursery.cancel_scope.cancel()
    data = json.loads(report.read_text())
    assert data["findings"] == [] and data["target"] == info.url


def test_tap_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_ref.cli import main

    assert main(["tap"]) == 2
    assert "give -- and the command" in capsys.readouterr().err
    assert main(["tap", "--listen", "127.0.0.1", "http://x/mcp"]) == 2
    assert "expected HOST:PORT" in capsys.readouterr().err
    assert main(["tap", "--listen", "127.0.0.1:1", "--", "python"]) == 2
    assert "forwards to one http:// or https:// URL" in capsys.readouterr().err
    assert main(["tap", "--listen", "127.0.0.1:1", "--cafile", "ca.pem", "http://127.0.0.1:9/mcp"]) == 2
    assert "--cafile applies to an https:// URL only" in capsys.readouterr().err
    assert main(["tap", "--cafile", "ca.pem", "--", "python"]) == 2
    assert "--cafile goes with --listen and an https:// URL" in capsys.readouterr().err


async def test_every_tap_spawn_gets_its_own_log(tmp_path: Path) -> None:
    """A client that starts its server (the tap) twice with the same --log: two logs, neither clobbered."""
    log = tmp_path / "traffic.jsonl"
    stderr: list[str] = []
    tap = ["-m", "mcp_ref.cli", "tap", "-q", "--log", str(log), "--", sys.executable, str(CORPUS)]
    async with open_stdio_client(sys.executable, tap, stderr=stderr.append) as first:
        async with open_stdio_client(sys.executable, tap, stderr=stderr.append) as second:
            with trio.fail_after(30):
                await first.ping()
                await second.list_tools()
    second_log = tmp_path / "traffic.2.jsonl"
    assert any(f"logging to {second_log}" in line for line in stderr), stderr
    methods = []
    for path in (log, second_log):
        records, _ = read_traffic(path.read_text())
        methods.append({json.loads(r.data).get("method") for r in records if r.direction is Direction.TO_SERVER})
    assert {"initialize", "ping"} <= methods[0] | methods[1] and "tools/list" in methods[0] | methods[1]
    assert all("initialize" in m for m in methods)


@pytest.mark.req("basic/transports#18")
@pytest.mark.parametrize("strict", [False, True])
def test_the_listening_tap_exits_by_its_findings_and_a_second_ctrl_c_keeps_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict: bool
) -> None:
    """``tap --listen`` ends on Ctrl-C: its exit status follows the findings (stdio hands on the server's instead),
    and a second Ctrl-C while the report is written does not lose it."""
    import os
    import signal

    from mcp_ref.cli import main
    from mcp_ref.crosscheck import http_tap
    from mcp_ref.crosscheck.report import Finding, Report

    level = "basic/transports#18" if not strict else "server/utilities/pagination#5"  # a MUST, then a SHOULD

    def served(host: str, port: int, url: str, tap: Tap, **_: Any) -> int:
        tap.found(Finding.of(level, "seen on the wire", party="server"))
        return 0  # as run_http_tap returns once Ctrl-C stopped it

    writing = Report.to_text

    def interrupted(self: Report) -> str:
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C again, while the report is written
        return writing(self)

    monkeypatch.setattr(http_tap, "run_http_tap", served)
    monkeypatch.setattr(Report, "to_text", interrupted)
    report = tmp_path / "tap.txt"
    args = ["tap", "-q", "--listen", "127.0.0.1:1", "--report", str(report), "http://127.0.0.1:9/mcp"]
    assert main([*args, *(["--strict"] if strict else [])]) == 1
    assert level in report.read_text()
    # and without the finding the run passes; SIGINT is the default handler again afterwards
    monkeypatch.setattr(http_tap, "run_http_tap", lambda *a, **k: 0)
    assert main(args) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
