"""The limits guide: the defaults, and raising them where a deployment needs more."""

import trio

from mcp_ref import HttpConfig, RequestContext, RequestTimeout, Server, SessionConfig
from mcp_ref.testing import memory_session_pair

defaults = SessionConfig()
print(defaults.request_timeout, defaults.max_request_timeout, defaults.max_concurrent_requests)
http = HttpConfig()
print(http.max_body, http.max_sessions, http.session_idle_timeout)

# a server whose clients may send bodies of up to 16 MiB and run 50 requests each at once:
#   serve_http(server, config=HttpConfig(max_body=16 * 2**20))  (or server.run_http(max_body=...))
server = Server("slow", "1.0", config=SessionConfig(max_concurrent_requests=50))
roomy = HttpConfig(max_body=16 * 2**20, session_idle_timeout=30 * 60)
print(roomy.max_body, roomy.session_idle_timeout)


@server.tool()
async def think(ctx: RequestContext, *, seconds: float) -> str:
    """Take a while to answer."""
    await trio.sleep(seconds)
    return "done"


async def main() -> None:
    # a client that waits up to 2 minutes of silence, 20 with progress (open_stdio_client and
    # open_http_client take config= too; open_http_client(url, max_message_size=...) the size)
    patient = SessionConfig(request_timeout=120, max_request_timeout=1200)
    async with memory_session_pair(server, config=patient) as client:
        print((await client.call_tool("think", {"seconds": 0.01})).text)
        try:
            await client.call_tool("think", {"seconds": 10}, timeout=0.05)  # one call's own timeout
        except RequestTimeout as e:
            print("RequestTimeout:", e)


if __name__ == "__main__":
    trio.run(main)
