"""A hostile stdio server: ``long_line_server.py MIB``.

Answers initialize; answers the first request after it with one line of MIB MiB
(an answer to it, padded), then every request (that one included, if asked again)
honestly: an empty tool list.
"""

import json
import sys

import trio

MIB = 1024 * 1024


async def main(mib: int) -> None:
    stdin, stdout = trio.lowlevel.FdStream(0), trio.lowlevel.FdStream(1)
    buf, padded = b"", False
    while True:
        while b"\n" not in buf:
            data = await stdin.receive_some(65536)
            if not data:
                return
            buf += data
        line, buf = buf.split(b"\n", 1)
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        if msg["method"] == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "long-line", "version": "1"},
            }
            await stdout.send_all(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")
        elif not padded:
            padded = True
            head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + b',"result":{"tools":[],"x":"'
            await stdout.send_all(head)
            for _ in range(mib):
                await stdout.send_all(b"x" * MIB)
            await stdout.send_all(b'"}}\n')
        else:
            await stdout.send_all(
                json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}).encode() + b"\n"
            )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]))
