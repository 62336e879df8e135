"""Three replicas of the everything server behind a real HAProxy, on one real PostgreSQL.

What the README's "Running several replicas" promises: 2026-07-28 requests go to
any replica (round robin); a task created on one is polled, updated and
cancelled on the others; a list change made on one reaches a listener on
another; 2025-11-25 sessions stick to the replica that created them; a replica
killed with ``kill -9`` loses no acknowledged task, and its running task fails,
saying so. HAProxy and PostgreSQL come from Debian packages (``.ci/run``
installs them; without them the test is skipped, saying so, unless
``MCP_REF_REQUIRE_HAPROXY`` is set).
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("psycopg", reason="the postgres extra (psycopg 3) is not installed")
pytestmark = pytest.mark.subprocess

from mcp_ref.testing.haproxy import HAProxy, HAProxyNotInstalled, start_haproxy  # noqa: E402
from mcp_ref.testing.postgres import PostgresNotInstalled, free_port, start_postgres  # noqa: E402

EXT = "io.modelcontextprotocol/tasks"
CAPS = {"elicitation": {}, "extensions": {EXT: {}}}
NAMED = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


def _required(what: str, error: Exception) -> None:
    if os.environ.get("MCP_REF_REQUIRE_HAPROXY"):
        pytest.fail(f"{what}: {error}")
    pytest.skip(f"{error}; .ci/run installs it")


class Cluster:
    def __init__(self, proxy: HAProxy, replicas: dict[str, tuple[int, subprocess.Popen[bytes]]]) -> None:
        self.proxy = proxy
        self.replicas = replicas

    def post(
        self, body: dict[str, Any], headers: dict[str, str], *, port: int | None = None
    ) -> tuple[int, dict[str, str], Any]:
        """One POST (to HAProxy, or to a replica's own ``port``): status, headers, the JSON-RPC answer."""
        conn = http.client.HTTPConnection("127.0.0.1", port or self.proxy.port, timeout=30)
        try:
            conn.request(
                "POST",
                "/mcp",
                json.dumps(body),
                {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
            )
            response = conn.getresponse()
            raw = response.read().decode()
            got = {k.lower(): v for k, v in response.getheaders()}
        finally:
            conn.close()
        if "text/event-stream" in got.get("content-type", ""):
            messages = [
                json.loads(line[5:]) for line in raw.splitlines() if line.startswith("data:") and line[5:].strip()
            ]
            answer = next((m for m in messages if "id" in m and "method" not in m), None)
        else:
            answer = json.loads(raw) if raw else None
        return response.status, got, answer

    def modern(self, method: str, params: dict[str, Any], *, port: int | None = None) -> tuple[str, dict[str, Any]]:
        """A 2026-07-28 request: (the replica that answered, its result); an error answer fails the test."""
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "replica-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": CAPS,
        }
        headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
        if method in NAMED:
            headers["Mcp-Name"] = params[NAMED[method]]
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
        status, got, answer = self.post(body, headers, port=port)
        assert status == 200 and answer is not None and "result" in answer, (status, answer)
        return got.get("x-mcp-replica", ""), answer["result"]

    def until(self, task_id: str, *statuses: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            _, task = self.modern("tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task
            assert time.monotonic() < deadline, f"task {task_id} is still {task['status']}"
            time.sleep(0.2)


def _wait_port(port: int, process: subprocess.Popen[bytes], log: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"a replica exited: {open(log).read()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"a replica did not start: {open(log).read()[-3000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        postgres = start_postgres()
    except PostgresNotInstalled as e:
        _required("PostgreSQL", e)
    logs = tmp_path_factory.mktemp("replicas")
    replicas: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
    proxy: HAProxy | None = None
    try:
        table = "t_" + uuid.uuid4().hex[:12]
        url = f"postgresql://postgres@127.0.0.1:{postgres.port}/postgres?table={table}&sweep=1"
        # the MRTR requestState key is shared configuration: any replica opens another's
        env = {**os.environ, "MCP_REF_STATE_KEY": "replica-test-" + uuid.uuid4().hex}
        for name in ("r1", "r2", "r3"):
            port = free_port()
            log = logs / f"{name}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "mcp_ref.examples.everything",
                        "--http",
                        "--port",
                        str(port),
                        "--task-db",
                        url,
                    ],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            replicas[name] = (port, process)
            _wait_port(port, process, str(log))
        try:
            proxy = start_haproxy([(name, port) for name, (port, _) in replicas.items()])
        except HAProxyNotInstalled as e:
            _required("HAProxy", e)
        yield Cluster(proxy, replicas)
    finally:
        if proxy is not None:
            proxy.close()
        for _, process in replicas.values():
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for _, process in replicas.values():
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        postgres.close()


def test_stateless_requests_go_to_every_replica(cluster: Cluster) -> None:
    seen = [cluster.modern("tools/call", {"name": "greet", "arguments": {"name": "r"}}) for _ in range(6)]
    assert {replica for replica, _ in seen} == {"r1", "r2", "r3"}
    assert all(result["content"][0]["text"] == "Hello, r!" for _, result in seen)
    # an MRTR round on one replica, its retry on another: the sealed requestState opens anywhere
    first_on, first = cluster.modern("tools/call", {"name": "test_tool_with_task", "arguments": {}})
    assert first["resultType"] == "input_required"
    retry = {
        "name": "test_tool_with_task",
        "arguments": {},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ida"}}},
        "requestState": first["requestState"],
    }
    second_on, created = cluster.modern("tools/call", retry)
    assert second_on != first_on and created["resultType"] == "task"
    assert "Ida" in cluster.until(created["taskId"], "completed", "failed")["result"]["content"][0]["text"]


def test_a_task_is_polled_updated_and_cancelled_on_other_replicas(cluster: Cluster) -> None:
    made_on, created = cluster.modern("tools/call", {"name": "confirm_delete", "arguments": {"filename": "f"}})
    task_id = created["taskId"]
    # stored before it was announced: the next replica finds it at once
    read_on, task = cluster.modern("tasks/get", {"taskId": task_id})
    assert read_on != made_on and task["taskId"] == task_id
    waiting = cluster.until(task_id, "input_required")
    (key,) = waiting["inputRequests"]
    answer = {key: {"action": "accept", "content": {"confirm": True}}}
    updated_on, ack = cluster.modern("tasks/update", {"taskId": task_id, "inputResponses": answer})
    assert ack["resultType"] == "complete"
    done = cluster.until(task_id, "completed", "failed")
    assert done["result"]["content"][0]["text"] == "deleted f"
    assert len({made_on, read_on, updated_on}) >= 2
    # cancelled on a replica that does not run it: the work stops where it runs
    runs_on, slow = cluster.modern("tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
    for _ in range(3):
        cancel_on, ack = cluster.modern("tasks/cancel", {"taskId": slow["taskId"]})
        if cancel_on != runs_on:
            break
    assert cancel_on != runs_on and ack["resultType"] == "complete"
    assert cluster.until(slow["taskId"], "cancelled", "completed", "failed")["status"] == "cancelled"


def test_a_list_change_reaches_a_listener_on_another_replica(cluster: Cluster) -> None:
    names = list(cluster.replicas)
    listen_port = cluster.replicas[names[0]][0]
    heard: list[dict[str, Any]] = []
    acknowledged = threading.Event()

    def listen() -> None:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "listener", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": meta},
        }
        conn = http.client.HTTPConnection("127.0.0.1", listen_port, timeout=30)
        conn.request(
            "POST",
            "/mcp",
            json.dumps(body),
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "subscriptions/listen",
            },
        )
        response = conn.getresponse()
        try:
            while True:
                line = response.fp.readline().decode()
                if not line:
                    return
                if line.startswith("data:") and line[5:].strip():
                    message = json.loads(line[5:])
                    if message.get("method") == "notifications/subscriptions/acknowledged":
                        acknowledged.set()
                    elif message.get("method") == "notifications/tools/list_changed":
                        heard.append(message)
                        return
        finally:
            conn.close()

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert acknowledged.wait(20)
    # the change is made on another replica
    other_port = cluster.replicas[names[1]][0]
    cluster.modern("tools/call", {"name": "toggle_tool", "arguments": {}}, port=other_port)
    listener.join(20)
    assert heard and heard[0]["method"] == "notifications/tools/list_changed"
    cluster.modern("tools/call", {"name": "toggle_tool", "arguments": {}}, port=other_port)  # (as it was)


def open_2025_session(cluster: Cluster) -> tuple[dict[str, str], str]:
    """A 2025-11-25 session through HAProxy: its headers, and the replica it lives on."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "sticky", "version": "0"},
        },
    }
    status, headers, answer = cluster.post(init, {})
    assert status == 200 and answer["result"]["protocolVersion"] == "2025-11-25"
    session_headers = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    status, _, _ = cluster.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session_headers)
    assert status == 202
    return session_headers, headers["x-mcp-replica"]


def greet_in(cluster: Cluster, session_headers: dict[str, str], i: int) -> tuple[int, dict[str, str], Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 10 + i,
        "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "s"}},
    }
    return cluster.post(body, session_headers)


def test_a_2025_session_sticks_to_its_replica(cluster: Cluster) -> None:
    session_headers, home = open_2025_session(cluster)
    for i in range(6):
        status, got, answer = greet_in(cluster, session_headers, i)
        # without the stick table two of three would reach a replica that never saw the session (404)
        assert status == 200 and got["x-mcp-replica"] == home, (status, got.get("x-mcp-replica"), home)
        assert answer["result"]["content"][0]["text"] == "Hello, s!"


def test_the_readme_shows_the_configuration_the_tests_run() -> None:
    from pathlib import Path

    from mcp_ref.testing.haproxy import haproxy_config

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("```haproxy\n", 1)[1].split("```", 1)[0]
    assert block == haproxy_config(8000, [("r1", 8001), ("r2", 8002), ("r3", 8003)])


RESUME = """
import sys, trio
from mcp_ref import open_http_client
from mcp_ref.ext.tasks import TaskHandle, call_tool

async def main(url, task_id):
    async with open_http_client(url, tasks_extension=True) as client:
        if task_id == "-":
            handle = await call_tool(client, "slow_compute", {"seconds": 2, "label": "kept"})
            print(handle.task_id)
        else:
            result = await TaskHandle(client, task_id).result()
            print(result.content[0].text)

trio.run(main, *sys.argv[1:])
"""


def test_a_task_started_by_one_process_is_finished_by_another_through_the_balancer(cluster: Cluster) -> None:
    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", RESUME, cluster.proxy.url, *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    task_id = run("-")  # this process keeps the handle's id and exits
    assert run(task_id) == "computed kept after 2 s"  # another one polls it to its result


def test_kill_9_of_a_replica_loses_no_acknowledged_task(cluster: Cluster) -> None:
    finished: list[str] = []
    for _ in range(6):
        _, created = cluster.modern("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
        finished.append(created["taskId"])
    for task_id in finished:
        cluster.until(task_id, "completed")
    # the victim: the replica of a 2025 session, running a task of the extension
    session_headers, victim = open_2025_session(cluster)
    for _ in range(4):
        runs_on, running = cluster.modern("tools/call", {"name": "slow_compute", "arguments": {"seconds": 120}})
        if runs_on == victim:
            break
        cluster.modern("tasks/cancel", {"taskId": running["taskId"]})
    assert runs_on == victim
    port, process = cluster.replicas[victim]
    process.kill()  # SIGKILL: nothing is written on the way out
    process.wait()
    # the session died with its replica: the next request reaches another replica, which knows it not
    status, got, _ = greet_in(cluster, session_headers, 99)
    assert status == 404 and got["x-mcp-replica"] != victim
    # the replicas left fail its task, saying why (its runner's lock went with its connection)
    failed = cluster.until(running["taskId"], "failed", "completed", "cancelled", timeout=60)
    assert failed["status"] == "failed"
    assert failed["statusMessage"] == "the server running it stopped before the task finished"  # (not "restarted")
    # every acknowledged task is still there, with its result, from the replicas left
    for task_id in finished:
        replica, task = cluster.modern("tasks/get", {"taskId": task_id})
        assert replica != victim and task["status"] == "completed" and task["result"]["content"]
