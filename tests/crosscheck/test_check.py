"""``mcp-ref check`` against mcp_ref's own examples (clean), and its command line.

Real processes over stdio: bounded by the battery's timeouts, no sleeps here.
"""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mcp_ref.cli import main
from mcp_ref.crosscheck.battery import check_server
from mcp_ref.crosscheck.config import ConfigError, load_config, parse_tool_option
from mcp_ref.crosscheck.targets import StdioTarget

HERE = Path(__file__).parent
EVERYTHING = StdioTarget(sys.executable, ("-m", "mcp_ref.examples.everything"))


async def test_the_everything_example_comes_out_clean() -> None:
    report = await check_server(EVERYTHING, load_config(HERE / "everything.toml"))
    assert report.findings == [], report.to_text()
    assert report.revision == "2025-11-25"
    statuses = {c.name: c.status for c in report.checks}
    assert "fail" not in statuses.values(), report.to_text()
    # every chapter of the battery ran something
    ran = {c.chapter for c in report.checks if c.status == "pass"}
    assert {
        "basic/lifecycle",
        "basic/index",
        "basic/utilities/ping",
        "basic/utilities/cancellation",
        "basic/utilities/progress",
        "server/utilities/pagination",
        "server/tools",
        "server/resources",
        "server/prompts",
        "server/utilities/completion",
        "server/utilities/logging",
        "basic/utilities/tasks",
    } <= ran, sorted(ran)


def test_the_echo_example_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "check.xml"
    argv = ["check", "-q", "--json", "--junit", str(junit), "--", sys.executable, "-m", "mcp_ref.examples.echo"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == f"{sys.executable} -m mcp_ref.examples.echo"
    assert data["findings"] == [] and data["summary"]["must"] == 0
    assert {c["status"] for c in data["checks"]} == {"pass", "skip"}
    skipped = [c for c in data["checks"] if c["status"] == "skip"]
    assert any(c["name"] == "cancellation/stops-and-stays-silent" for c in skipped)
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and int(suite.get("tests") or 0) == len(data["checks"])


def test_text_report_and_progress_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--only", "ping", "--", sys.executable, "-m", "mcp_ref.examples.echo"]) == 0
    captured = capsys.readouterr()
    assert "check ping/answered-promptly" in captured.err  # progress on stderr
    lines = captured.out.splitlines()
    assert lines[0] == f"mcp-ref cross-check of {sys.executable} -m mcp_ref.examples.echo"
    assert lines[-1].startswith("0 MUST and 0 SHOULD violated")


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["check"], "give a URL, or -- and the command"),
        (["check", "--only", "nonsense", "--", "x"], "unknown chapters ['nonsense']"),
        (["check", "--header", "A: b", "--", "x"], "--header applies to a URL target only"),
        (["check", "--header", "nocolon", "http://127.0.0.1:9/mcp"], "expected 'Name: value'"),
        (["check", "--slow-tool", "slow {bad json", "--", "x"], "not JSON"),
        (["check", "--timeout", "0", "--", "x"], "--timeout must be positive"),
        (["check", "--oauth", "--", "x"], "--oauth, --client-credentials and --cafile apply to a URL target only"),
        (["check", "--cafile", "ca.pem", "http://127.0.0.1:9/mcp"], "--cafile applies to an https:// URL only"),
        (["check", "--client-credentials", "id-only", "http://127.0.0.1:9/mcp"], "expected ID:SECRET"),
        (["check", "--oauth-scope", "mcp", "http://127.0.0.1:9/mcp"], "go with --oauth"),
    ],
)
def test_usage_errors_exit_two(argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert problem in capsys.readouterr().err


@pytest.mark.parametrize(
    "word, said",
    [
        ("notaurl", "'notaurl' is neither a URL (http://, https://) nor a command found on PATH"),
        ("ftp://example.com/mcp", "is not a URL mcp-ref can check (http:// or https://), nor a command"),
        (__file__, "is neither a URL nor a command: the file is not executable"),
    ],
)
def test_a_target_that_is_neither_a_url_nor_a_command_is_one_line(
    word: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "-q", word]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err, err


def test_an_unreachable_target_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-q", "--", str(tmp_path / "no-such-server")]) == 2
    assert "is neither a URL nor a command: no such file" in capsys.readouterr().err
    # a server that exits at once, saying why on stderr
    quits = ["check", "-q", "--", sys.executable, "-c", "import sys; sys.exit('no config file')"]
    assert main(quits) == 2
    err = capsys.readouterr().err
    assert "cannot check the target" in err and "no config file" in err
    # a URL nothing listens at
    assert main(["check", "-q", "http://127.0.0.1:1/mcp"]) == 2
    assert "cannot check the target: http://127.0.0.1:1/mcp" in capsys.readouterr().err


def test_a_config_file_names_tools_by_role(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('timeout = 5\n[tools.slow]\nname = "s"\narguments = { n = 1 }\n[[tools.call]]\nname = "a"\n')
    config = load_config(path)
    assert config.timeout == 5 and config.tool("slow") == parse_tool_option('s {"n": 1}')
    assert [c.name for c in config.calls] == ["a"]


def test_the_config_example_in_the_docs_loads_as_written(tmp_path: Path) -> None:
    import textwrap

    from mcp_ref.crosscheck import config as config_module

    doc = config_module.__doc__ or ""
    example = textwrap.dedent(doc.split("::\n", 1)[1])
    path = tmp_path / "example.toml"
    path.write_text(example)
    config = load_config(path)
    assert (config.timeout, config.cancel_wait) == (10, 2)
    assert config.tool("slow") == parse_tool_option('long_running {"seconds": 5}')
    assert config.calls == (parse_tool_option('add {"a": 1, "b": 2}'),)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("[tools.fast]\nname = 'x'\n", "unknown tool role 'fast'"),
        ("[tools.slow]\narguments = {}\n", "tools.slow needs a name"),
        ("timeout = -1\n", "timeout must be a positive number"),
        ("[other]\n", "unknown sections ['other']"),
        ("not toml at all = = =\n", "is not valid TOML"),
    ],
)
def test_a_bad_config_file_is_refused_saying_why(text: str, problem: str, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert problem in str(caught.value)


async def test_a_failed_http_exchange_is_judged_as_the_answer_it_carried() -> None:
    """Over Streamable HTTP an error status fails the request with HTTPTransportError: the raw
    probes see the JSON-RPC error of its body (or -32603 saying what failed), as an answer."""
    from mcp_ref.crosscheck.battery import RawSession
    from mcp_ref.errors import HTTPTransportError, MCPError

    class Failing:
        def __init__(self, error: HTTPTransportError) -> None:
            self.error = error

        async def receive(self) -> bytes:
            raise self.error

    with_body = HTTPTransportError("http://x/mcp answered HTTP 400: [-32600] bad", status=400, request_id=7)
    with_body.__cause__ = MCPError(-32600, "bad", {"why": "no session"})
    raw = RawSession(Failing(with_body), timeout=1)  # type: ignore[arg-type]
    assert await raw.receive(1) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": "bad", "data": {"why": "no session"}},
    }
    bare = HTTPTransportError("http://x/mcp answered HTTP 502: <html>", status=502, request_id="a")
    raw = RawSession(Failing(bare), timeout=1)  # type: ignore[arg-type]
    assert await raw.receive(1) == {
        "jsonrpc": "2.0",
        "id": "a",
        "error": {"code": -32603, "message": "http://x/mcp answered HTTP 502: <html>"},
    }
    raw = RawSession(Failing(HTTPTransportError("not a request's")), timeout=1)  # type: ignore[arg-type]
    with pytest.raises(HTTPTransportError):
        await raw.receive(1)


@pytest.mark.req("basic/transports#18", "basic/transports#21", "basic/transports#39", "basic/transports#68")
async def test_the_everything_example_over_streamable_http_comes_out_clean() -> None:
    import trio

    from mcp_ref.crosscheck.targets import HttpTarget
    from mcp_ref.examples.everything import build_server
    from mcp_ref.session.http import serve_http

    async with trio.open_nursery() as nursery:
        server = build_server(nursery)
        info = await nursery.start(lambda task_status: serve_http(server, task_status=task_status))
        report = await check_server(HttpTarget(info.url), load_config(HERE / "everything.toml"))
        await info.aclose()
        nursery.cancel_scope.cancel()
    assert report.findings == [], report.to_text()
    # every revision it speaks has its section; nothing fails in any, nothing is skipped in the latest
    # (one Server serves both eras on one endpoint: the 2026-07-28 battery has its section too)
    assert report.revisions == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    assert {c.revision for c in report.checks} == {None, "2026-07-28", "2025-06-18", "2025-03-26", "2024-11-05"}
    assert "fail" not in {c.status for c in report.checks}, report.to_text()
    statuses = {c.name: c.status for c in report.checks if c.revision is None}
    assert "fail" not in statuses.values() and "skip" not in statuses.values(), report.to_text()
    # the transport's own checks ran
    assert {n for n in statuses if n.startswith("transport/")} == {
        "transport/request-answered-with-json-or-sse",
        "transport/notification-answered-202",
        "transport/get-sse-or-405",
        "transport/resume-this-stream-only",
        "transport/unsupported-protocol-version",
        "transport/foreign-origin",
        "transport/missing-session-id",
        "transport/ended-session-404",
        "transport/sse-streams-and-session-ids",
        "transport/version-header-omitted",
        "transport/tool-call-streams",
    }
    # (trial30c D5) our own server keeps event ids: the resumed stream replays its own answer only
    resumed = next(c for c in report.checks if c.name == "transport/resume-this-stream-only")
    assert "nothing to resume" not in resumed.detail, report.to_text()


@pytest.mark.req("basic/transports#21")
async def test_an_https_server_is_checked_with_the_trust_given() -> None:
    import trio
    import trustme

    from mcp_ref.crosscheck.targets import HttpTarget, TargetUnreachable
    from mcp_ref.examples.everything import build_server
    from mcp_ref.session.http import serve_http

    from ..basic.transports.test_https import client_context, server_context

    ca = trustme.CA()
    async with trio.open_nursery() as nursery:
        server = build_server(nursery)
        context = server_context(ca)
        info = await nursery.start(lambda task_status: serve_http(server, ssl_context=context, task_status=task_status))
        assert info.url.startswith("https://")
        report = await check_server(HttpTarget(info.url, ssl_context=client_context(ca)), only=["transport", "ping"])
        # the system's trust store does not know the test's CA: refused, saying so
        with pytest.raises(TargetUnreachable) as untrusted:
            await check_server(HttpTarget(info.url), only=["ping"])
        await info.aclose()
        nursery.cancel_scope.cancel()
    assert report.findings == [], report.to_text()
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["transport/request-answered-with-json-or-sse"] == "pass" and "fail" not in statuses.values()
    assert "TLS handshake" in str(untrusted.value) and "CERTIFICATE_VERIFY_FAILED" in str(untrusted.value)


def test_revision_2026_says_what_else_is_spoken_and_which_tools_were_not_called(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """(trial30 #5) with --revision 2026-07-28 the earlier revisions are the ones server/discover
    lists (the line agrees with the note that the server speaks one too), and the tools left
    uncalled are named with the reason, as in the handshake revisions."""
    echo = ["--", sys.executable, "-m", "mcp_ref.examples.echo"]
    assert main(["check", "-q", "--json", "--revision", "2026-07-28", *echo]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["revisions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    exercised = next(c for c in data["checks"] if c["name"] == "modern/tools/exercised")
    assert exercised["detail"] == (
        "0 of 1 tool(s) called; not called: echo (no annotations); "
        "--call-all-tools calls the tools not marked readOnlyHint"
    )


def test_revision_picks_one_revision(capsys: pytest.CaptureFixture[str]) -> None:
    echo = ["--", sys.executable, "-m", "mcp_ref.examples.echo"]
    assert main(["check", "-q", "--json", "--revision", "2025-06-18", *echo]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["revision"] == "2025-06-18" and "2025-06-18" in data["revisions"]
    assert {c["revision"] for c in data["checks"]} == {"2025-06-18"}  # one section: the revision asked for
    assert main(["check", "-q", "--revision", "1999-01-01", *echo]) == 2
    assert "--revision 1999-01-01: mcp-ref checks" in capsys.readouterr().err


@pytest.mark.req("basic/lifecycle#3")
def test_an_http_server_that_accepts_and_never_answers_gets_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    """Reached but silent is not unreachable: the report is written, with the finding stdio gets (trial30b N3)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])  # read nothing, never answer
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        assert main(["check", "-q", "--json", "--timeout", "0.5", url]) == 1
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert [f["requirement"] for f in report["findings"]] == ["basic/lifecycle#3"], report
    assert "did not answer initialize" in report["findings"][0]["message"]
