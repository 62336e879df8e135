"""A hostile stdio server: ``ping_flooder.py PINGS``.

Answers initialize; at the first request after it, writes PINGS pings (all
with the same id: the client answers each) without reading anything (until its
writes find no room for two seconds: the client pushes back), then answers the
request (an empty tool list) while reading what the client wrote meanwhile, and
serves pings and tools/list until EOF.
"""

import json
import os
import sys
from typing import Any

import trio
from _peer import initialize_answer, line_reader


async def main(count: int) -> None:
    stdin, stdout = trio.lowlevel.FdStream(0), trio.lowlevel.FdStream(1)
    message = line_reader(stdin)

    lock = trio.Lock()

    async def send(obj: dict) -> None:  # type: ignore[type-arg]
        async with lock:
            await stdout.send_all(json.dumps(obj).encode() + b"\n")

    async with trio.open_nursery() as nursery:
        await serve(count, message, send, nursery)


async def serve(count: int, message: Any, send: Any, nursery: trio.Nursery) -> None:
    flooded = False
    while (msg := await message()) is not None:
        if "id" not in msg or "method" not in msg:
            continue
        if msg["method"] == "initialize":
            await send(json.loads(initialize_answer(msg, "flooder")))
            continue
        if not flooded:
            flooded = True
            ping = json.dumps({"jsonrpc": "2.0", "id": "p", "method": "ping"}).encode() + b"\n"
            chunk = ping * (4096 // len(ping))  # (at most PIPE_BUF: written whole or not at all)
            sent = 0
            while sent < count:
                with trio.move_on_after(2) as stalled:
                    await trio.lowlevel.wait_writable(1)
                if stalled.cancelled_caught:
                    break  # the client pushes back
                try:
                    os.write(1, chunk)
                except BlockingIOError:
                    continue
                sent += chunk.count(b"\n")
        # (answered from another task: this one goes back to reading at once, so the
        # client's stuck replies can go out and it reads our answer)
        result = {"tools": []} if msg["method"] == "tools/list" else {}
        nursery.start_soon(send, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]))
