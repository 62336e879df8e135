"""Our stdio client, under test, against a hostile server: ``stdio_client.py SERVER ARG``
(SERVER a script beside this one, run with ARG).

Says ``ready`` once initialised; then for each line on stdin but ``exit`` asks for the
tool list (the server floods us before it answers), and says ``done`` and how the
request ended; at ``exit`` it exits (so the test can read its memory at each step).
"""

import sys
from pathlib import Path

import trio

from mcp_ref.session import open_stdio_client


async def main(server: str, arg: str) -> None:
    script = str(Path(__file__).with_name(server))
    async with open_stdio_client(sys.executable, [script, arg], stderr="inherit", era="legacy") as client:
        print("ready", flush=True)
        while (await trio.to_thread.run_sync(sys.stdin.readline)).strip() != "exit":
            try:
                result = await client.list_tools(timeout=120)
                outcome = f"done {len(result.tools)} tools"
            except Exception as e:  # the test reads how the request ended
                outcome = f"done error {type(e).__name__}: {e}"
            print(outcome[:300].replace("\n", " "), flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], sys.argv[2])
