"""A hostile stdio server: ``task_flooder.py COUNT``.

Answers initialize; at the first request after it, sends COUNT task-augmented
``sampling/createMessage`` requests to the client as fast as it can, reads the
answers, and answers the request with a tool list that tells what came back:
one tool per outcome, named ``<outcome>-<how many>`` (``created``, or the error
code of a refusal). Then serves tools/list until EOF.
"""

import json
import sys
from collections import Counter
from typing import Any

import trio
from _peer import initialize_answer, line_reader

SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 5,
    "task": {"ttl": 3_600_000},
}


async def main(count: int) -> None:
    stdin, stdout = trio.lowlevel.FdStream(0), trio.lowlevel.FdStream(1)
    message = line_reader(stdin)

    async def send(obj: dict[str, Any]) -> None:
        await stdout.send_all(json.dumps(obj).encode() + b"\n")

    seen: Counter[str] = Counter()
    flooded, pending = False, None  # (pending: the id of the request we answer after the flood)
    async with trio.open_nursery() as nursery:
        while (msg := await message()) is not None:
            if "method" not in msg:  # an answer to one of ours
                seen["created" if "result" in msg else str(msg["error"]["code"])] += 1
                if flooded and sum(seen.values()) == count:
                    tools = [{"name": f"{k}-{v}", "inputSchema": {"type": "object"}} for k, v in sorted(seen.items())]
                    await send({"jsonrpc": "2.0", "id": pending, "result": {"tools": tools}})
                continue
            if "id" not in msg:
                continue
            if msg["method"] == "initialize":
                await stdout.send_all(initialize_answer(msg, "task-flooder"))
            elif not flooded:
                flooded, pending = True, msg["id"]
                requests = (
                    {"jsonrpc": "2.0", "id": f"s{n}", "method": "sampling/createMessage", "params": SAMPLE}
                    for n in range(count)
                )
                # (sent from another task: this one goes on reading the answers meanwhile)
                data = b"".join(json.dumps(r).encode() + b"\n" for r in requests)
                nursery.start_soon(stdout.send_all, data)
            else:
                await send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}})
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]))
