"""Our Streamable HTTP client, under test: ``http_client.py URL TOOL``.

Says ``ready`` once its session is initialised, waits for a line on stdin,
calls TOOL, says ``done`` and how the call ended, waits for another line,
and exits (so the test can read its memory at each step).
"""

import sys

import trio

from mcp_ref.session.http import open_http_client


async def main(url: str, tool: str) -> None:
    # (no output schemas to learn: the hostile server answers the one call it is scripted for)
    async with open_http_client(url, max_reconnects=0, validate_tool_results=False, era="legacy") as client:
        print("ready", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)
        try:
            result = await client.call_tool(tool, timeout=120)
            outcome = "result " + " ".join(getattr(b, "text", "") for b in result.content)
        except Exception as e:  # the test reads how the call ended
            outcome = f"error {type(e).__name__}: {e}"
        print("done " + outcome[:300].replace("\n", " "), flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], sys.argv[2])
