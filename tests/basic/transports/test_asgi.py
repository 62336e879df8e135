"""The MCP endpoint as an ASGI application, in a real Hypercorn process (trio worker),
mounted in a Starlette application: what our own HTTP server guarantees holds there too."""

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import h11
import pytest
import trio

from mcp_ref import AsgiApp, ProtectedResource, Server, open_http_client
from mcp_ref.schema import TextContent

from ...conftest import ROOT
from ._raw_http import read_response
from .test_streamable_http import INIT, exchange

pytest.importorskip("hypercorn", reason="Hypercorn is in the test extra")
pytest.importorskip("starlette", reason="Starlette is in the test extra")

pytestmark = pytest.mark.subprocess


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def hypercorn(app: str, config: Path | None = None) -> AsyncIterator[str]:
    """``tests.basic.transports.asgi_apps:<app>`` served by Hypercorn's trio worker (with the
    TOML ``config`` file given); yields its base URL."""
    port = free_port()
    argv = [sys.executable, "-m", "hypercorn", "-k", "trio", "--bind", f"127.0.0.1:{port}"]
    if config is not None:
        argv += ["--config", str(config)]
    argv.append(f"tests.basic.transports.asgi_apps:{app}")
    async with listening(argv, ROOT, port):
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def listening(argv: list[str], cwd: Path, port: int) -> AsyncIterator[None]:
    """``argv`` run in ``cwd`` until the block ends, entered once it listens on ``port``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with trio.fail_after(30):
            while True:
                try:
                    await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    if proc.poll() is not None:
                        raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "hypercorn exited") from None
                    await trio.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("app", ["starlette_app", "bare_app"])
async def test_a_client_of_either_era_through_hypercorn(app: str, era: str) -> None:
    # both eras on the one endpoint: 2026-07-28 stateless requests (Mcp-Method / Mcp-Name
    # headers, no session) and a 2025-11-25 session (initialize, Mcp-Session-Id)
    async with hypercorn(app) as base:
        with trio.fail_after(30):
            async with open_http_client(f"{base}/mcp", era=era) as client:
                assert client.era == era
                assert client.protocol_version == {"modern": "2026-07-28", "legacy": "2025-11-25"}[era]
                result = await client.call_tool("echo", {"text": "through hypercorn"})
                assert result.content == [TextContent(text="through hypercorn")]
                seen: list[float] = []

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    seen.append(progress)

                # an event stream, piece by piece through the bridge
                assert (await client.call_tool("count", {"steps": 4}, progress=on_progress)).text == "done"
                assert seen == [1, 2, 3, 4]
                # cancelling a call reaches the handler, as on our own server
                with trio.move_on_after(1):
                    await client.call_tool("hang")
                await client.ping()


async def test_a_subscription_stream_through_hypercorn() -> None:
    # 2026-07-28 subscriptions/listen: a long event stream, each change sent on as it happens
    async with hypercorn("starlette_app") as base:
        with trio.fail_after(30):
            async with open_http_client(f"{base}/mcp", era="modern") as client:
                async with client.listen(tools=True) as subscription:
                    changes = subscription.__aiter__()
                    for _ in range(2):
                        name = (await client.call_tool("grow")).text
                        assert (await changes.__anext__())[0] == "notifications/tools/list_changed"
                        assert name in [tool.name for tool in await client.list_all_tools()]


@pytest.mark.req("2026-07-28:basic/transports/streamable-http#61")
async def test_headers_that_contradict_the_body_are_refused_behind_hypercorn() -> None:
    from .test_http_modern import post

    async with hypercorn("starlette_app") as base:
        with trio.fail_after(30):
            headers, body = post("tools/call", {"name": "echo", "arguments": {"text": "x"}})
            async with exchange(f"{base}/mcp", "POST", headers, body) as ok:
                assert ok.status == 200 and json.loads(await ok.body())["result"]["content"][0]["text"] == "x"
            async with exchange(f"{base}/mcp", "POST", {**headers, "mcp-name": "fail"}, body) as refused:
                assert refused.status == 400 and json.loads(await refused.body())["error"]["code"] == -32020


async def test_the_web_application_keeps_its_own_routes() -> None:
    async with hypercorn("starlette_app") as base:
        with trio.fail_after(30):
            async with exchange(f"{base}/", "GET") as home:
                assert home.status == 200 and await home.body() == b"the web application's own page"


@pytest.mark.req("basic/transports#9", "basic/transports#10")
async def test_origin_host_and_limits_hold_behind_hypercorn() -> None:
    async with hypercorn("starlette_app") as base:
        url = f"{base}/mcp"
        accept = {"accept": "application/json, text/event-stream"}
        with trio.fail_after(30):
            async with exchange(url, "POST", {**accept, "origin": "https://evil.example"}, INIT) as refused:
                assert refused.status == 403
                error = json.loads(await refused.body())
                # the same error body as our own server's: a JSON-RPC error of no request, "id": null
                assert error["id"] is None and "allowed_origins=" in error["error"]["message"]
            # a Host the application was not told about: DNS rebinding
            async with exchange(url, "POST", {**accept, "host": "evil.example"}, INIT) as refused:
                assert refused.status == 403
            # max_body=64 KiB in asgi_apps.py: a larger body is 413, from our server's own check
            big = {**INIT, "params": {**INIT["params"], "pad": "x" * 70_000}}
            async with exchange(url, "POST", accept, big) as too_big:
                assert too_big.status == 413 and json.loads(await too_big.body())["id"] is None
            # GET without a session, DELETE of an unknown one: as our server answers them
            async with exchange(url, "DELETE", {"mcp-session-id": "nope"}) as unknown:
                assert unknown.status == 404


def test_authorization_needs_the_resource_the_clients_use() -> None:
    class Nobody:
        async def verify(self, token: str) -> object:
            raise AssertionError

    auth = ProtectedResource(verifier=Nobody(), authorization_servers=["https://as.example"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"needs ProtectedResource\(resource=\.\.\.\)"):
        Server("s").asgi_app(auth=auth)
    assert isinstance(Server("s").asgi_app(), AsgiApp)


async def test_a_request_before_the_lifespan_is_a_clear_503() -> None:
    app = Server("s").asgi_app()
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"host", b"127.0.0.1")]}
    await app(scope, receive, send)
    assert sent[0]["status"] == 503
    error = json.loads(sent[1]["body"])  # type: ignore[arg-type]
    assert error["id"] is None and "not started" in error["error"]["message"]


async def raw_exchange(base: str, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes, bool]:
    """Bytes as a client wrote them, then the answer's status, headers and body, and whether
    the server closed the connection after it (read to the end, on a raw socket)."""
    port = int(base.rsplit(":", 1)[1])
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(head + body)
        conn = h11.Connection(h11.CLIENT)
        conn.send(h11.Request(method="POST", target="/", headers=[("host", "x")]))
        conn.send(h11.EndOfMessage())
        status, headers, data = await read_response(conn, stream)
        # after the answer: the server closes (EOF), or keeps the connection for the next request
        closed = False
        with trio.move_on_after(2):
            closed = await stream.receive_some(65536) == b""
        return status, headers, data, closed


async def test_a_request_framed_two_ways_is_refused_at_once_behind_hypercorn() -> None:
    # Transfer-Encoding and Content-Length both (the request smuggling shape): 400 at once, the
    # connection closed -- as our own server answers it, not a request waiting for bytes that
    # never come
    body = json.dumps({**INIT, "id": 1}).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    async with hypercorn("starlette_app") as base:
        head = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\ntransfer-encoding: chunked\r\n"
            f"content-length: {len(chunked)}\r\n\r\n"
        ).encode()
        with trio.fail_after(5):
            status, _, answer, closed = await raw_exchange(base, head, chunked)
        error = json.loads(answer)["error"]
        assert status == 400 and "both Transfer-Encoding and Content-Length" in error["message"]
        assert closed


def padded_head(size: int) -> bytes:
    """A DELETE of an unknown session whose head is exactly ``size`` bytes, as sent."""
    head = b"DELETE /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nmcp-session-id: nope\r\nx-pad: \r\n\r\n"
    return head.replace(b"x-pad: ", b"x-pad: " + b"a" * (size - len(head)))


async def test_the_head_limit_is_on_what_the_client_sent_behind_hypercorn(tmp_path: Path) -> None:
    # 64 KiB of head, counted on the bytes the client sent (the bridge rebuilds the head for our
    # server, which must not count what it adds); over it, 431 and the connection closed.
    # (Hypercorn's own h11 limit is 16 KiB: raised here so that ours is the one that answers.)
    config = tmp_path / "hypercorn.toml"
    config.write_text("h11_max_incomplete_size = 262144\n")
    async with hypercorn("starlette_app", config) as base:
        for size in (65_518, 65_536, 65_537):
            head = padded_head(size)
            assert len(head) == size
            with trio.fail_after(10):
                status, _, answer, closed = await raw_exchange(base, head)
            if size <= 64 * 1024:
                assert (status, closed) == (404, False), size  # read whole: the session is unknown
            else:
                assert status == 431 and json.loads(answer)["error"]["code"] == -32600
                assert closed


def guide_section() -> str:
    text = (ROOT / "docs" / "http.rst").read_text()
    return text[text.index("Mounting in a web application (ASGI)") : text.index("\nConnecting\n")]


async def test_the_guide_s_web_site_runs_as_pasted(tmp_path: Path) -> None:
    # docs/http.rst's ASGI section, as a newcomer follows it in an empty directory: its
    # website.py, its hypercorn command (on a free port instead of 8000), its client script
    section = guide_section()
    website, client = (
        textwrap.dedent(b) for b in re.findall(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", section)
    )
    (command,) = re.findall(r"^    \$ (hypercorn .*website:app)$", section, re.MULTILINE)
    assert "-b 127.0.0.1:8000" in command  # loopback only
    port = free_port()
    (tmp_path / "website.py").write_text(website)
    (tmp_path / "client.py").write_text(client.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
    argv = [str(Path(sys.executable).with_name("hypercorn")), *command.split()[1:]]
    argv = [a.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for a in argv]
    async with listening(argv, tmp_path, port):
        with trio.fail_after(30):
            async with exchange(f"http://127.0.0.1:{port}/", "GET") as home:
                assert home.status == 200 and await home.body() == b"the web site's own page"
            done = await trio.run_process(
                [sys.executable, "client.py"],
                cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == "hello, trio\n"


async def test_a_refusal_over_http2_ends_its_stream_not_the_connection() -> None:
    # HTTP/2 (prior knowledge, cleartext, loopback) through Hypercorn: a body over max_body is
    # 413 on its stream, and the connection goes on to serve the next stream (no connection
    # header is passed on: HTTP/2 has none)
    import h2.config
    import h2.connection
    import h2.events

    async with hypercorn("starlette_app") as base:
        stream = await trio.open_tcp_stream("127.0.0.1", int(base.rsplit(":", 1)[1]))
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        head = [(":scheme", "http"), (":authority", "127.0.0.1"), ("accept", "application/json, text/event-stream")]
        big = [(":method", "POST"), (":path", "/mcp"), *head, ("content-type", "application/json")]
        conn.send_headers(1, [*big, ("content-length", "70000")])
        conn.send_headers(3, [(":method", "DELETE"), (":path", "/mcp"), *head, ("mcp-session-id", "nope")])
        conn.end_stream(3)
        status: dict[int, int] = {}
        body: dict[int, bytes] = {1: b"", 3: b""}
        ended: set[int] = set()
        async with stream:
            await stream.send_all(conn.data_to_send())
            with trio.fail_after(10):
                while ended != {1, 3}:
                    data = await stream.receive_some(65536)
                    assert data, "the connection closed"
                    for event in conn.receive_data(data):
                        if isinstance(event, h2.events.ResponseReceived):
                            status[event.stream_id] = int(dict(event.headers)[b":status"])
                        elif isinstance(event, h2.events.DataReceived):
                            body[event.stream_id] += event.data
                        elif isinstance(event, h2.events.StreamEnded):
                            ended.add(event.stream_id)
                    await stream.send_all(conn.data_to_send())
        assert status == {1: 413, 3: 404} and json.loads(body[1])["id"] is None
