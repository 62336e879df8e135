"""Our stdio client, under test, against a server that floods it: ``stdio_client.py PINGS``.

Says ``ready`` once initialised, waits for a line on stdin, asks for the tool list
(the server floods PINGS pings before answering, and reads nothing meanwhile), says
``done`` and how the request ended, waits for another line, and exits.
"""

import sys
from pathlib import Path

import trio

from mcp_ref.session import open_stdio_client

FLOODER = Path(__file__).with_name("ping_flooder.py")


async def main(pings: str) -> None:
    async with open_stdio_client(sys.executable, [str(FLOODER), pings], stderr="inherit") as client:
        print("ready", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)
        try:
            result = await client.list_tools(timeout=120)
            outcome = f"done {len(result.tools)} tools"
        except Exception as e:  # the test reads how the request ended
            outcome = f"done error {type(e).__name__}: {e}"
        print(outcome[:300].replace("\n", " "), flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
