"""HTTPS on both sides: real TLS on loopback, certificates made by the test (trustme)."""

import ssl
from typing import Any

import h11
import pytest
import trio
import trustme

from mcp_ref.errors import HTTPTransportError, TLSError
from mcp_ref.session import RequestContext, Server
from mcp_ref.session.http import open_http_client

from .test_streamable_http import http_server, read_request, tcp_server


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


def server_context(ca: trustme.CA, *names: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("127.0.0.1", "localhost"))).configure_cert(ctx)
    return ctx


def client_context(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


def echo_server() -> Server:
    server = Server("tls")

    @server.tool()
    async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text"))

    return server


@pytest.mark.req("basic/authorization#79")
async def test_a_session_over_https(ca: trustme.CA) -> None:
    async with http_server(echo_server(), ssl_context=server_context(ca)) as info:
        assert info.url.startswith("https://127.0.0.1:")
        async with open_http_client(info.url, ssl_context=client_context(ca)) as client:
            result = await client.call_tool("echo", {"text": "over tls"})
            assert result.content[0].text == "over tls"  # type: ignore[union-attr]
            # kept-alive TLS connections are reused, and the GET stream runs over TLS too
            for _ in range(3):
                await client.ping()


@pytest.mark.req("basic/authorization#79")
async def test_an_untrusted_certificate_is_one_clear_tls_error(ca: trustme.CA) -> None:
    """The system trust store (the default) does not know the test's CA: the handshake
    fails, and the user gets a TLSError naming the URL, not a broken-stream traceback."""
    async with http_server(echo_server(), ssl_context=server_context(ca)) as info:
        with trio.fail_after(10), pytest.raises(TLSError) as raised:
            async with open_http_client(info.url):
                pytest.fail("the session must not open")
        assert info.url in str(raised.value) and "CERTIFICATE_VERIFY_FAILED" in str(raised.value)
        assert isinstance(raised.value, HTTPTransportError)


@pytest.mark.req("basic/authorization#79")
async def test_a_certificate_for_another_name_is_refused(ca: trustme.CA) -> None:
    async with http_server(echo_server(), ssl_context=server_context(ca, "other.example")) as info:
        with trio.fail_after(10), pytest.raises(TLSError, match=r"mismatch|doesn't match|not valid for"):
            async with open_http_client(info.url, ssl_context=client_context(ca)):
                pytest.fail("the session must not open")


@pytest.mark.req("basic/authorization#79")
async def test_client_certificates(ca: trustme.CA) -> None:
    """A server requiring client certificates takes a client presenting one its CA issued."""
    server_ctx = server_context(ca)
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    ca.configure_trust(server_ctx)
    async with http_server(echo_server(), ssl_context=server_ctx) as info:
        with_cert = client_context(ca)
        ca.issue_cert("client@example").configure_cert(with_cert)
        async with open_http_client(info.url, ssl_context=with_cert) as client:
            assert (await client.call_tool("echo", {"text": "mtls"})).content[0].text == "mtls"  # type: ignore[union-attr]
        # without one, the server ends the handshake: a TLSError, or with TLS 1.3 (where the
        # client's side of the handshake is over first) a connection closed unanswered: both
        # are HTTP transport errors (TLSError is one)
        with trio.fail_after(10), pytest.raises(HTTPTransportError):
            async with open_http_client(info.url, ssl_context=client_context(ca)):
                pytest.fail("the session must not open")


async def test_plain_http_refuses_an_ssl_context(ca: trustme.CA) -> None:
    with pytest.raises(ValueError, match="https"):
        async with open_http_client("http://127.0.0.1:1/mcp", ssl_context=client_context(ca)):
            pytest.fail("unreachable")


async def test_a_plain_client_at_a_tls_server_does_not_take_it_down(ca: trustme.CA) -> None:
    """Garbage instead of a handshake ends that connection only."""
    async with http_server(echo_server(), ssl_context=server_context(ca)) as info:
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        await stream.send_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\n\r\n")
        with trio.fail_after(5):
            while await stream.receive_some(1024):
                pass
        await stream.aclose()
        async with open_http_client(info.url, ssl_context=client_context(ca)) as client:
            await client.ping()


async def test_plain_http_to_a_tls_port_is_a_400_that_names_https(ca: trustme.CA) -> None:
    # it used to be a closed connection, which our client reported in h11's own words
    # ("can't handle event type ConnectionClosed when role=SERVER ...")
    async with http_server(echo_server(), ssl_context=server_context(ca)) as info:
        plain = info.url.replace("https://", "http://")
        with trio.fail_after(10), pytest.raises(HTTPTransportError) as raised:
            async with open_http_client(plain):
                pytest.fail("the session must not open")
        assert raised.value.status == 400
        assert str(raised.value) == (
            f"{plain} answered HTTP 400: [-32600] Bad Request: this server speaks HTTPS (TLS); use an https:// URL"
        )
        # any client (curl) reads the same answer
        stream = await trio.open_tcp_stream("127.0.0.1", info.port)
        await stream.send_all(b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        answer = b""
        with trio.fail_after(5):
            while data := await stream.receive_some(1024):
                answer += data
        await stream.aclose()
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n") and b"use an https:// URL" in answer


async def test_https_to_a_plain_http_port_is_a_tls_error_that_names_http() -> None:
    async with http_server(echo_server()) as info:
        secure = info.url.replace("http://", "https://")
        with trio.fail_after(10), pytest.raises(TLSError, match=r"does not speak TLS there: .* use an http:// URL"):
            async with open_http_client(secure):
                pytest.fail("the session must not open")


async def test_a_server_that_closes_without_answering_is_said_so_plainly() -> None:
    async def close_at_once(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await stream.aclose()

    async with tcp_server(close_at_once) as port:
        with trio.fail_after(10), pytest.raises(HTTPTransportError) as raised:
            async with open_http_client(f"http://127.0.0.1:{port}/mcp"):
                pytest.fail("the session must not open")
    message = str(raised.value)
    assert "the server closed the connection without answering; if it serves HTTPS, use an https:// URL" in message
    assert "ConnectionClosed" not in message and "role=" not in message


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_not_followed(status: int) -> None:
    """A 3xx is an error naming the Location; nothing is sent there."""

    async def redirecting(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        while (request := await read_request(stream, conn)) is not None:
            headers = [("location", "https://elsewhere.example/mcp"), ("content-length", "0")]
            await stream.send_all(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
            await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
            conn.start_next_cycle()
            assert request[0].method == b"POST"

    async with tcp_server(redirecting) as port:
        with trio.fail_after(10), pytest.raises(HTTPTransportError) as raised:
            async with open_http_client(f"http://127.0.0.1:{port}/mcp"):
                pytest.fail("the session must not open")
    assert raised.value.status == status
    assert raised.value.location == "https://elsewhere.example/mcp"
    assert f"HTTP {status}" in raised.value.message and "not followed" in raised.value.message
