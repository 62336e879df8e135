"""One HTTP exchange for OAuth documents and endpoints: limits and refusals, against raw servers."""

import json
from collections.abc import Awaitable, Callable
from typing import Any

import h11
import pytest
import trio
import trio.testing
import trustme

from mcp_ref.basic.transports.http_fetch import http_exchange
from mcp_ref.errors import HTTPTransportError

from .test_https import client_context, server_context
from .test_streamable_http import read_request, tcp_server


def answering(
    status: int, body: bytes, headers: dict[str, str] | None = None, *, chunked: bool = False
) -> Callable[[trio.SocketStream], Awaitable[None]]:
    """A raw server giving one answer; it records the requests it got."""
    seen: list[tuple[h11.Request, bytes]] = []

    async def handler(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        request = await read_request(stream, conn)
        assert request is not None
        seen.append(request)
        length = {} if chunked else {"content-length": str(len(body))}
        head = h11.Response(status_code=status, headers=list({**length, **(headers or {})}.items()))
        out = (conn.send(head) or b"") + (conn.send(h11.Data(data=body)) or b"" if body else b"")
        await stream.send_all(out + (conn.send(h11.EndOfMessage()) or b""))
        await stream.aclose()

    handler.seen = seen  # type: ignore[attr-defined]
    return handler


async def test_a_form_is_posted_and_the_json_answer_read() -> None:
    handler = answering(200, b'{"active": true}', {"content-type": "application/json"})
    async with tcp_server(handler) as port:
        answer = await http_exchange(
            "POST",
            f"http://127.0.0.1:{port}/introspect?x=1",
            form={"token": "a b"},
            headers={"authorization": "Basic x"},
        )
    assert answer.status == 200 and answer.json() == {"active": True}
    ((request, body),) = handler.seen  # type: ignore[attr-defined]
    assert request.target == b"/introspect?x=1" and body == b"token=a+b"
    assert (b"content-type", b"application/x-www-form-urlencoded") in request.headers
    assert (b"authorization", b"Basic x") in request.headers


async def test_a_redirect_is_not_followed() -> None:
    async with tcp_server(answering(302, b"", {"location": "https://evil.example/x"})) as port:
        with pytest.raises(HTTPTransportError) as failed:
            await http_exchange("GET", f"http://127.0.0.1:{port}/doc")
    assert failed.value.status == 302 and failed.value.location == "https://evil.example/x"


@pytest.mark.parametrize("chunked", [False, True])
async def test_an_answer_over_the_size_limit_is_refused(chunked: bool) -> None:
    async with tcp_server(answering(200, b"x" * 5000, chunked=chunked)) as port:
        with pytest.raises(HTTPTransportError, match="over 4096"):
            await http_exchange("GET", f"http://127.0.0.1:{port}/big", max_body=4096)


async def test_a_body_that_is_not_json_is_one_clear_error() -> None:
    async with tcp_server(answering(500, b"<html>oops</html>", {"content-type": "text/html"})) as port:
        answer = await http_exchange("GET", f"http://127.0.0.1:{port}/doc")
    with pytest.raises(HTTPTransportError, match="not JSON") as failed:
        answer.json()
    assert failed.value.status == 500


async def test_a_server_that_does_not_answer_times_out(mock_clock: trio.testing.MockClock) -> None:
    async def silent(stream: trio.SocketStream) -> None:
        await trio.sleep_forever()

    async with tcp_server(silent) as port, trio.open_nursery() as nursery:
        outcome: list[Any] = []

        async def fetch() -> None:
            with pytest.raises(HTTPTransportError, match="did not answer within 3 s") as failed:
                await http_exchange("GET", f"http://127.0.0.1:{port}/slow", timeout=3)
            outcome.append(failed.value)

        nursery.start_soon(fetch)
        await trio.testing.wait_all_tasks_blocked()
        mock_clock.jump(3)
        with trio.fail_after(10):
            while not outcome:
                await trio.sleep(0)
        nursery.cancel_scope.cancel()


async def test_https_with_a_private_ca() -> None:
    ca = trustme.CA()
    handler = answering(200, json.dumps({"keys": []}).encode())

    async def tls(stream: trio.SocketStream) -> None:
        wrapped = trio.SSLStream(stream, server_context(ca), server_side=True)
        await handler(wrapped)  # type: ignore[arg-type]

    async with tcp_server(tls) as port:
        answer = await http_exchange("GET", f"https://127.0.0.1:{port}/jwks", ssl_context=client_context(ca))
        assert answer.json() == {"keys": []}
        with pytest.raises(HTTPTransportError):  # the system trust store does not know this CA
            await http_exchange("GET", f"https://127.0.0.1:{port}/jwks")
