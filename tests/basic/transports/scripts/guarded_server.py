"""A stdio server whose user code misbehaves: it prints, writes to fd 1 and reads stdin.

Serves with open_stdio_server_channel() and echoes every message; for each one
it first writes stray output in every way it can. With --no-guard the
channel is opened with guard=False (the stray output then reaches stdout).
After the channel it prints one line, which must reach the real stdout again.
"""

import logging
import os
import subprocess
import sys

import trio

from mcp_ref.basic.transports.stdio import open_stdio_server_channel

GUARD = "--no-guard" not in sys.argv


def misbehave(n: int) -> None:
    print(f"stray print {n}")
    os.write(1, f"stray fd write {n}\n".encode())
    sys.stdout.buffer.write(f"stray buffer write {n}\n".encode())
    early_handler.stream.write(f"stray log {n}\n")
    early_handler.flush()
    subprocess.run([sys.executable, "-c", f"print('stray child {n}')"], check=True)


async def main() -> None:
    async with open_stdio_server_channel(guard=GUARD) as ch:
        if GUARD:
            stolen = sys.stdin.read()  # fd 0 is /dev/null: nothing to steal
            sys.stderr.write(f"stdin read by user code: {stolen!r}\n")
            try:
                async with open_stdio_server_channel():
                    pass
            except RuntimeError as e:
                sys.stderr.write(f"nested: {e}\n")
        n = 0
        while True:
            try:
                msg = await ch.receive()
            except trio.EndOfChannel:
                break
            misbehave(n)
            await ch.send(msg)
            n += 1
    print("after the channel: stdout is restored")


early_handler = logging.StreamHandler(sys.stdout)  # holds the original sys.stdout object
trio.run(main)
