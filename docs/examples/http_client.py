"""The HTTP guide: a server on HTTPS with a private CA, a client trusting it, and the transport's errors."""

import ssl
from functools import partial

import trio
import trustme  # a private CA for the example (pip install trustme); use your real certificate instead

from mcp_ref import HTTPTransportError, RequestContext, Server, open_http_client, serve_http

server = Server("greeter", "1.0")


@server.tool()
async def greet(ctx: RequestContext, *, name: str = "world") -> str:
    """Greet someone."""
    return f"hello, {name}"


async def main() -> None:
    ca = trustme.CA()
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_tls)
    client_tls = ssl.create_default_context()  # the system's trust store ...
    ca.configure_trust(client_tls)  # ... and our private CA (client_tls.load_verify_locations("ca.pem"))

    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, server, ssl_context=server_tls))  # 127.0.0.1, a free port
        print(info.url.startswith("https://127.0.0.1:"), info.url.endswith("/mcp"))
        async with open_http_client(info.url, ssl_context=client_tls) as client:
            print((await client.call_tool("greet", {"name": "trio"})).text)

        try:  # an exchange that fails at the HTTP level: not a JSON-RPC error answer
            async with open_http_client(info.url.replace("/mcp", "/nowhere"), ssl_context=client_tls):
                pass
        except HTTPTransportError as e:
            print("HTTP", e.status, (e.url or "").endswith("/nowhere"))
        try:  # a certificate the client does not trust: TLSError, an HTTPTransportError too
            async with open_http_client(info.url):
                pass
        except HTTPTransportError as e:
            print(type(e).__name__, e.status)
        await info.aclose()  # graceful shutdown


if __name__ == "__main__":
    trio.run(main)
