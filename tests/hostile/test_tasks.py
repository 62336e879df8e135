"""Task floods: a requestor that creates tasks as fast as it can (tasks#resource-management).

Finished tasks are kept until their ttl, for tasks/result: without a cap, a peer
grows the receiver's memory by one task per request. The receiver keeps at most
``max_stored_tasks_per_requestor`` (1000) per requestor and ``max_stored_tasks``
in all, and refuses the next with -32600. The task rate limiter is off in these
servers (tests/hostile/scripts/task_server.py): it is a defence measured in time,
and the caps must hold without it.
"""

import json
import subprocess as sp
from collections import Counter
from typing import Any

import pytest
import trio

from ..basic.transports.test_streamable_http import raw, sse_messages, start_session
from .conftest import MIB, SCRIPTS, http_subprocess, memory_of, python_argv, subprocess
from .test_stdio import INIT, INITIALIZED, line, read_until

PER_REQUESTOR = 1000  # TaskConfig.max_stored_tasks_per_requestor, the default
TTL = 3_600_000


def create(request_id: int) -> dict[str, Any]:
    params = {"name": "work", "arguments": {}, "task": {"ttl": TTL}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def outcome(answer: dict[str, Any]) -> str:
    """'created', or the error code of a refusal."""
    if "result" in answer:
        assert answer["result"]["task"]["status"] in ("working", "completed")
        return "created"
    return str(answer["error"]["code"])


@pytest.mark.req("basic/utilities/tasks#81")
async def test_a_task_flood_over_stdio_is_capped_per_requestor() -> None:
    flood = 3 * PER_REQUESTOR
    argv = python_argv(str(SCRIPTS / "task_server.py"), "stdio", "10000")
    async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE, stderr=sp.DEVNULL) as server:
        assert server.stdin is not None and server.stdout is not None
        await server.stdin.send_all(INIT + INITIALIZED)
        rest = (await read_until(server.stdout, b'"id":0')).split(b"\n", 1)[1]
        memory = memory_of(server.pid)
        memory.mark()
        seen: Counter[str] = Counter()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(server.stdin.send_all, b"".join(line(create(n)) for n in range(1, flood + 1)))
            buffer = rest
            with trio.fail_after(120):
                while sum(seen.values()) < flood:
                    while b"\n" not in buffer:
                        chunk = await server.stdout.receive_some(65536)
                        assert chunk, "the server exited"
                        buffer += chunk
                    text, buffer = buffer.split(b"\n", 1)
                    message = json.loads(text)
                    if "id" in message and "method" not in message:
                        seen[outcome(message)] += 1
        memory.assert_growth_below(24 * MIB, f"{flood:,} tasks created over stdio ({seen['created']:,} kept)")
        assert seen == {"created": PER_REQUESTOR, "-32600": flood - PER_REQUESTOR}, seen


@pytest.mark.req("basic/utilities/tasks#81")
async def test_a_task_flood_over_http_is_capped_in_all() -> None:
    # four sessions (four requestors) of 1000 tasks each against a cap of 2500 in all
    sessions, in_all = 4, 2500
    argv = python_argv(str(SCRIPTS / "task_server.py"), "http", str(in_all))
    async with http_subprocess(argv) as (url, memory):
        headers = [await start_session(url) for _ in range(sessions)]
        memory.mark()
        seen: Counter[str] = Counter()

        async def flood(session: dict[str, str]) -> None:
            for n in range(PER_REQUESTOR):
                status, _, body = await raw(url, "POST", session, create(n))
                assert status == 200
                (answer,) = [m for m in sse_messages(body) if "id" in m and "method" not in m]
                seen[outcome(answer)] += 1

        async with trio.open_nursery() as nursery:
            for session in headers:
                nursery.start_soon(flood, session)
        total = sessions * PER_REQUESTOR
        memory.assert_growth_below(48 * MIB, f"{total:,} tasks created over HTTP ({seen['created']:,} kept)")
        assert seen == {"created": in_all, "-32600": total - in_all}, seen


@pytest.mark.req("basic/utilities/tasks#81")
async def test_a_task_flood_from_a_server_is_capped_in_our_client() -> None:
    # the client is the receiver of task-augmented sampling: the same caps hold there
    flood = 3 * PER_REQUESTOR
    argv = python_argv(str(SCRIPTS / "task_client.py"), str(flood))
    async with subprocess(argv, stdin=sp.PIPE, stdout=sp.PIPE) as client:
        assert client.stdin is not None and client.stdout is not None
        assert (await read_until(client.stdout, b"ready\n")).endswith(b"ready\n")
        memory = memory_of(client.pid)
        memory.mark()
        await client.stdin.send_all(b"go\n")
        outcome = await read_until(client.stdout, b"\n")
        memory.assert_growth_below(24 * MIB, f"{flood:,} sampling tasks from a server")
        assert outcome == f"done -32600-{flood - PER_REQUESTOR} created-{PER_REQUESTOR}\n".encode(), outcome
        await client.stdin.send_all(b"exit\n")
