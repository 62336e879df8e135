"""Saves ``count`` authorizations into one FileTokenStorage, keys ``prefix-0`` .. ``prefix-N``:
run twice at once, the two must not lose each other's entries. Prints ``ready`` and waits for a
line on stdin before it starts, so both processes write at the same time."""

import sys

import trio

from mcp_ref.basic.authorization.tokens import Tokens
from mcp_ref.basic.transports.oauth_storage import FileTokenStorage, StoredAuthorization


async def main(path: str, prefix: str, count: int) -> None:
    storage = FileTokenStorage(path)
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(count):
        await storage.save(f"{prefix}-{n}", StoredAuthorization(tokens=Tokens(access_token=f"{prefix}-{n}")))


if __name__ == "__main__":
    trio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
