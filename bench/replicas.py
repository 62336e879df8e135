"""Replicas behind HAProxy: 2026-07-28 ``tools/call`` per second with one replica and with two (issue 29).

    .venv/bin/python -m bench.replicas                      # 5 s per setup, 16 clients
    .venv/bin/python -m bench.replicas --seconds 10 --clients 32

Two everything servers (``python -m mcp_ref.examples.everything --http``) run
on loopback ports; an HAProxy (``mcp_ref.testing.haproxy``) balances over the
first only, another over both. Client processes (``--procs``, each with
``clients / procs`` threads on keep-alive connections) send stateless
``tools/call greet`` requests through one HAProxy for ``--seconds`` after a
warm-up, and count the answers. The clients run on the same machine as the
servers: on a machine with few cores they take CPU the replicas would use, so
the ratio says what this machine gives, not what separate hosts would. Nothing
here is a timed test: results go to stdout and ``bench/results/replicas.json``.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mcp_ref.testing.haproxy import start_haproxy  # noqa: E402
from mcp_ref.testing.postgres import free_port  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "greet", "arguments": {"name": "bench"}, "_meta": META},
    }
)
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "greet",
}


def _client(port: int, until: float, counts: list[int], errors: list[int], index: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while time.monotonic() < until:
        try:
            conn.request("POST", "/mcp", BODY, HEADERS)
            response = conn.getresponse()
            data = response.read()
            if response.status == 200 and b'"result"' in data:
                counts[index] += 1
            else:
                errors[index] += 1
        except (OSError, http.client.HTTPException):
            errors[index] += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.close()


def _process(port: int, threads: int, start: float, until: float, out: Any) -> None:
    time.sleep(max(0.0, start - time.time()))
    end = time.monotonic() + (until - start)
    counts, errors = [0] * threads, [0] * threads
    workers = [threading.Thread(target=_client, args=(port, end, counts, errors, i)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.put((sum(counts), sum(errors)))


def load(port: int, seconds: float, clients: int, procs: int) -> tuple[float, int]:
    """Calls per second through ``port`` (and the errors) with ``clients`` threads in ``procs`` processes."""
    queue: Any = multiprocessing.Queue()
    start = time.time() + 0.5
    per = max(1, clients // procs)
    workers = [
        multiprocessing.Process(target=_process, args=(port, per, start, start + seconds, queue)) for _ in range(procs)
    ]
    for w in workers:
        w.start()
    results = [queue.get() for _ in workers]
    for w in workers:
        w.join()
    return sum(r[0] for r in results) / seconds, sum(r[1] for r in results)


def _wait(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--procs", type=int, default=2, help="client processes (the clients are split among them)")
    args = parser.parse_args(argv)
    env = {**os.environ, "MCP_REF_STATE_KEY": "bench-replicas-" + os.urandom(16).hex()}
    ports = [free_port(), free_port()]
    servers = [
        subprocess.Popen(
            [sys.executable, "-m", "mcp_ref.examples.everything", "--http", "--port", str(p)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for p in ports
    ]
    proxies = []
    try:
        for p in ports:
            _wait(p)
        proxies = [start_haproxy([("r1", ports[0])]), start_haproxy([("r1", ports[0]), ("r2", ports[1])])]
        load(proxies[1].port, 1.0, args.clients, args.procs)  # warm-up (both replicas), discarded
        results: dict[str, Any] = {}
        for name, proxy in (("one replica", proxies[0]), ("two replicas", proxies[1])):
            rate, errors = load(proxy.port, args.seconds, args.clients, args.procs)
            results[name] = {"calls_per_second": round(rate, 1), "errors": errors}
            print(f"{name:>13}: {rate:8.1f} tools/call per second ({errors} errors)")
        ratio = results["two replicas"]["calls_per_second"] / max(results["one replica"]["calls_per_second"], 1e-9)
        print(f"{'ratio':>13}: {ratio:8.2f}x  (goal 1.6x; clients share the machine's {os.cpu_count()} cores)")
        out = ROOT / "bench" / "results"
        out.mkdir(exist_ok=True)
        report = {
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "seconds": args.seconds,
            "clients": args.clients,
            "procs": args.procs,
            "results": results,
            "ratio": round(ratio, 2),
        }
        (out / "replicas.json").write_text(json.dumps(report, indent=2) + "\n")
    finally:
        for proxy in proxies:
            proxy.close()
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
