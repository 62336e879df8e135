"""Issue 31's server limits behind the ASGI bridge: a user is the client's address as the ASGI
server gives it (``scope["client"]``), as a socket's peer is for our own server (row 2), and a
batch past ``max_batch`` is refused whole (row 5).

Driven in process (the ASGI calls made here, no ASGI server): every request's in-process
connection has no address of its own, so before the bridge passed the client's on, all its
clients were one user -- one client's sessions evicted another's idle session, and its
requests in progress took everyone's stream share.
"""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from mcp_ref import AsgiApp
from mcp_ref.testing.transport_check import check_server

from ._servers import Tally
from .test_http_users import holding_server, modern
from .test_streamable_http import ACCEPT_BOTH, INIT

JSON = {**ACCEPT_BOTH, "content-type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


class Answer:
    """What the application sent for one request, as it comes."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.started = trio.Event()
        self.ended = trio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message["headers"]}
            self.started.set()
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")
            if not message.get("more_body", False):
                self.ended.set()


def scope(method: str, headers: dict[str, str], client: tuple[str, int] | None) -> dict[str, Any]:
    raw = [(b"host", b"127.0.0.1:8000"), *((k.encode(), v.encode()) for k, v in headers.items())]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "headers": raw,
        "client": client,
        "server": ("127.0.0.1", 8000),
    }


async def request(
    app: AsgiApp, client: tuple[str, int] | None, headers: dict[str, str], body: Any, answer: Answer | None = None
) -> Answer:
    """One POST through the application from ``client``; returns once it is answered (the
    client stays connected until then)."""
    answer = answer or Answer()
    data = json.dumps(body).encode()
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": data, "more_body": False}
        await trio.sleep_forever()
        raise AssertionError

    headers = {"content-type": "application/json", **headers, "content-length": str(len(data))}
    await app(scope("POST", headers, client), receive, answer.send)
    return answer


async def start_session(app: AsgiApp, client: tuple[str, int] | None, version: str = "2025-11-25") -> dict[str, str]:
    init: dict[str, Any] = json.loads(json.dumps(INIT))
    init["params"]["protocolVersion"] = version
    answer = await request(app, client, JSON, init)
    assert answer.status == 200, answer.body
    session = {**JSON, "mcp-session-id": answer.headers["mcp-session-id"]}
    initialized = await request(app, client, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert initialized.status == 202
    return session


@asynccontextmanager
async def running(app: AsgiApp) -> AsyncIterator[AsgiApp]:
    with trio.fail_after(10):
        async with app.running():
            yield app


async def test_one_clients_sessions_do_not_evict_anothers_behind_asgi() -> None:
    app = check_server().asgi_app(json_response=True, max_sessions=10, max_sessions_per_user=2)
    async with running(app):
        quiet, greedy = ("127.0.0.2", 50001), ("127.0.0.3", 50002)
        idle = await start_session(app, quiet)
        opened = [await start_session(app, (greedy[0], greedy[1] + n)) for n in range(5)]
        # the greedy client made room among its own sessions (another port, the same address)
        assert (await request(app, quiet, idle, PING)).status == 200
        assert (await request(app, greedy, opened[-1], PING)).status == 200
        assert (await request(app, greedy, opened[0], PING)).status == 404


async def test_one_clients_requests_in_progress_do_not_take_anothers_share_behind_asgi() -> None:
    app = holding_server().asgi_app(max_streams_per_user=1)
    async with running(app), trio.open_nursery() as nursery:
        greedy, quiet = ("127.0.0.3", 50002), ("127.0.0.2", 50001)
        held = Answer()
        nursery.start_soon(request, app, greedy, *modern("tools/call", "hold"), held)
        await held.started.wait()
        assert held.status == 200 and held.headers["content-type"] == "text/event-stream"
        # the greedy client is at its share; the quiet one is not held back by it
        assert (await request(app, greedy, *modern("tools/list"))).status == 429
        listed = await request(app, quiet, *modern("tools/list"))
        assert listed.status == 200 and json.loads(listed.body)["result"]["tools"][0]["name"] == "hold"
        nursery.cancel_scope.cancel()


async def test_a_client_without_an_address_is_still_served_behind_asgi() -> None:
    # (a Unix socket: the ASGI server gives no client address; such clients are one user)
    app = check_server().asgi_app(json_response=True)
    async with running(app):
        session = await start_session(app, None)
        assert (await request(app, None, session, PING)).status == 200


async def test_a_batch_past_the_limit_is_refused_whole_behind_asgi() -> None:
    tally = Tally()
    app = tally.server.asgi_app(json_response=True, max_batch=3)
    async with running(app):
        session = await start_session(app, ("127.0.0.2", 50001), "2025-03-26")
        batch = tally.batch(4)
        refused = await request(app, ("127.0.0.2", 50001), session, batch)
        assert (
            refused.status == 400 and "a batch of 4 messages; at most 3" in json.loads(refused.body)["error"]["message"]
        )
        assert tally.calls == 0  # none of it handled
        taken = await request(app, ("127.0.0.2", 50001), session, batch[:3])
        assert taken.status == 200 and len(json.loads(taken.body)) == 3 and tally.calls == 3
