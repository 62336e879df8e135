"""Replicas behind HAProxy: 2026-07-28 ``tools/call`` per second with one replica and with two (issue 29).

    .venv/bin/python -m bench.replicas                          # wrk, 16 connections, 3 rounds of 8 s
    .venv/bin/python -m bench.replicas --rounds 5 --seconds 10
    .venv/bin/python -m bench.replicas --generator python       # the Python client of earlier runs

Two everything servers (``python -m mcp_ref.examples.everything --http``) run
on loopback ports; an HAProxy (``mcp_ref.testing.haproxy``) balances over the
first only, another over both. A load generator sends stateless ``tools/call
greet`` requests through one HAProxy on keep-alive connections for
``--seconds``, and counts the answers that are 200 with a ``result``.

The load generator shares the machine with the servers, so it must cost little
next to them: by default it is ``wrk`` (C, one thread, event driven; Debian
``apt-get install wrk``, which this bench runs when it is missing and it may),
with a Lua script that checks each answer. ``--generator python`` is the
earlier generator (``http.client`` in threads in ``--procs`` processes): on a
2-core machine it takes about as much CPU per call as a replica, which is why
it could not show two replicas doing more than one.

Rounds are interleaved (one replica, two replicas; the next round the other way
round) so that load from other work on the machine falls on both setups alike;
the report gives each setup's median and spread, and for every run the CPU
each process used (replicas, HAProxy, generator: cores busy on average) and what
the rest of the machine used meanwhile (``/proc/stat`` busy time less ours), so
a ratio below the goal can be told apart from a machine that was busy.
Nothing here is a timed test: results go to stdout and
``bench/results/replicas.json``.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
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
TICK = os.sysconf("SC_CLK_TCK")


# -- CPU accounting ---------------------------------------------------------------------------


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_cpu() -> tuple[float, float]:
    """Busy and total CPU seconds of the whole machine so far (``/proc/stat``)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(values[:8])  # (guest time is counted in user already)
    idle = values[3] + values[4]
    return (total - idle) / TICK, total / TICK


# -- generators -------------------------------------------------------------------------------

#: the request, and a report at the end: answers that are not 2xx and socket errors count as errors
_WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = %(body)s
%(headers)s
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
%(check)s
function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    + summary.errors.status
  for _, thread in ipairs(threads) do errors = errors + thread:get("bad") end
  io.write(string.format('WRK {"requests": %%d, "seconds": %%f, "errors": %%d, "p50_us": %%d, "p99_us": %%d}\\n',
    summary.requests, summary.duration / 1e6, errors, latency:percentile(50), latency:percentile(99)))
end
"""


#: each answer's body is checked too (a Lua call per answer: the warm-up does it, the measured runs not)
_WRK_CHECK = """\
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) then bad = bad + 1 end
end
"""


def _lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def find_wrk(install: bool) -> str | None:
    """The ``wrk`` binary; installed with apt-get first when missing, ``install`` and root."""
    found = shutil.which("wrk")
    if found is None and install and os.geteuid() == 0 and shutil.which("apt-get"):
        print("wrk is missing: apt-get install wrk", file=sys.stderr)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], env=env, stdout=subprocess.DEVNULL, check=False)
        found = shutil.which("wrk")
    return found


class Wrk:
    """``wrk`` with one thread and ``connections`` keep-alive connections.

    A run with ``check`` also looks into every answer's body (200 with a ``result``),
    at a cost in the generator's CPU; the others count what is not 2xx.
    """

    name = "wrk"

    def __init__(self, binary: str, connections: int) -> None:
        self.binary = binary
        self.connections = connections
        self.dir = Path(tempfile.mkdtemp(prefix="mcp_ref-bench-wrk-"))
        headers = "\n".join(f"wrk.headers[{_lua_string(k)}] = {_lua_string(v)}" for k, v in HEADERS.items())
        self.scripts: dict[bool, Path] = {}
        for check in (False, True):
            script = self.dir / f"mcp-{'check' if check else 'count'}.lua"
            script.write_text(
                _WRK_SCRIPT % {"body": _lua_string(BODY), "headers": headers, "check": _WRK_CHECK if check else ""}
            )
            self.scripts[check] = script

    def run(self, port: int, seconds: float, check: bool = False) -> dict[str, Any]:
        """Calls per second through ``port``, errors, latency, and the generator's own CPU seconds."""
        # (wrk takes whole seconds: a shorter run is one second; the rate is from its own clock)
        command = [self.binary, "-t1", f"-c{self.connections}", f"-d{max(1, round(seconds))}s", "--timeout", "10s"]
        command += ["-s", str(self.scripts[check]), f"http://127.0.0.1:{port}/mcp"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert process.stdout is not None
        output = process.stdout.read().decode()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        lines = [line for line in output.splitlines() if line.startswith("WRK ")]
        if process.returncode != 0 or not lines:
            raise RuntimeError(f"wrk failed ({process.returncode}): {output[-2000:]}")
        report = json.loads(lines[-1][4:])
        good = report["requests"] - report["errors"]
        return {
            "calls_per_second": good / report["seconds"],
            "errors": report["errors"],
            "p50_us": report["p50_us"],
            "p99_us": report["p99_us"],
            "generator_cpu": usage.ru_utime + usage.ru_stime,
        }

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


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
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.put((sum(counts), sum(errors), usage.ru_utime + usage.ru_stime))


class PythonClients:
    """The earlier generator: ``http.client`` in threads, ``connections / procs`` per process."""

    name = "python"

    def __init__(self, connections: int, procs: int) -> None:
        self.connections = connections
        self.procs = procs

    def run(self, port: int, seconds: float, check: bool = True) -> dict[str, Any]:
        """Calls per second through ``port`` (every answer's body is checked), errors, CPU seconds."""
        queue: Any = multiprocessing.Queue()
        start = time.time() + 0.5
        per = max(1, self.connections // self.procs)
        workers = [
            multiprocessing.Process(target=_process, args=(port, per, start, start + seconds, queue))
            for _ in range(self.procs)
        ]
        for w in workers:
            w.start()
        results = [queue.get() for _ in workers]
        for w in workers:
            w.join()
        return {
            "calls_per_second": sum(r[0] for r in results) / seconds,
            "errors": sum(r[1] for r in results),
            "generator_cpu": sum(r[2] for r in results),
        }

    def close(self) -> None:
        pass


# -- the bench --------------------------------------------------------------------------------


def _wait(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port}")


def measure(generator: Any, proxy: Any, replicas: list[int], seconds: float) -> dict[str, Any]:
    """One run through ``proxy``: the generator's numbers, and the CPU every part used (cores on average)."""
    ours = [*replicas, proxy.process.pid]
    before = [process_cpu(pid) for pid in ours]
    busy0, total0 = machine_cpu()
    wall0 = time.monotonic()
    result: dict[str, Any] = generator.run(proxy.port, seconds)
    wall = time.monotonic() - wall0
    busy1, total1 = machine_cpu()
    used = [process_cpu(pid) - b for pid, b in zip(ours, before)]
    replica_cpu = used[:-1]
    result["replica_cores"] = [round(c / wall, 2) for c in replica_cpu]
    result["haproxy_cores"] = round(used[-1] / wall, 2)
    result["generator_cores"] = round(result.pop("generator_cpu") / wall, 2)
    # what everything else on the machine used meanwhile (other work, and our idle replica)
    result["other_cores"] = round(max(0.0, (busy1 - busy0) - sum(used) - result["generator_cores"] * wall) / wall, 2)
    result["machine_cores"] = round((total1 - total0) / wall, 2)
    calls = result["calls_per_second"] * seconds
    result["server_cpu_us_per_call"] = round(1e6 * sum(replica_cpu) / max(calls, 1), 1)
    result["load"] = round(os.getloadavg()[0], 2)  # (1-minute average, at the end of the run)
    result["calls_per_second"] = round(result["calls_per_second"], 1)
    return result


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1), "max": round(max(values), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up (answers checked)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each setup, interleaved")
    parser.add_argument("--connections", "--clients", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--generator", choices=("wrk", "python"), default="wrk")
    parser.add_argument("--procs", type=int, default=2, help="--generator python: client processes")
    parser.add_argument(
        "--quiet", type=float, default=0.25, help="a round is quiet when other work used at most this many cores"
    )
    parser.add_argument(
        "--haproxy-threads",
        type=int,
        default=1,
        help="HAProxy's nbthread (0: its default, one per CPU); one leaves the cores to the replicas",
    )
    parser.add_argument("--no-install", action="store_true", help="do not apt-get install a missing wrk")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "replicas.json")
    args = parser.parse_args(argv)
    generator: Any
    if args.generator == "wrk":
        binary = find_wrk(not args.no_install)
        if binary is None:
            parser.error("wrk is not installed (Debian: apt-get install wrk), or use --generator python")
        generator = Wrk(binary, args.connections)
    else:
        generator = PythonClients(args.connections, args.procs)
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
        threads = args.haproxy_threads or None
        proxies = [
            start_haproxy([("r1", ports[0])], threads=threads),
            start_haproxy([("r1", ports[0]), ("r2", ports[1])], threads=threads),
        ]
        pids = [s.pid for s in servers]
        setups = {"one replica": (proxies[0], pids[:1]), "two replicas": (proxies[1], pids)}
        # warm-up (both replicas), every answer checked: a bench of errors would measure nothing
        warm = generator.run(proxies[1].port, args.warmup, check=True)
        if warm["errors"]:
            raise RuntimeError(f"{warm['errors']} of the warm-up's answers were not a tools/call result")
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in setups}
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        for round_ in range(args.rounds):
            order = list(setups) if round_ % 2 == 0 else list(reversed(setups))
            for name in order:
                proxy, replicas = setups[name]
                result = measure(generator, proxy, replicas, args.seconds)
                runs[name].append(result)
                print(
                    f"round {round_ + 1} {name:>12}: {result['calls_per_second']:8.1f} calls/s"
                    f" ({result['errors']} errors)  replicas {result['replica_cores']} cores,"
                    f" haproxy {result['haproxy_cores']}, {generator.name} {result['generator_cores']},"
                    f" other work {result['other_cores']} (load {result['load']})",
                    flush=True,
                )
        rates = {name: [r["calls_per_second"] for r in rs] for name, rs in runs.items()}
        one, two = (statistics.median(rates[n]) for n in ("one replica", "two replicas"))
        ratio = two / max(one, 1e-9)
        ratios = [b / max(a, 1e-9) for a, b in zip(rates["one replica"], rates["two replicas"])]
        # the rounds in which the rest of the machine stayed (nearly) idle during both runs
        quiet = [
            i
            for i in range(args.rounds)
            if max(runs["one replica"][i]["other_cores"], runs["two replicas"][i]["other_cores"]) <= args.quiet
        ]
        quiet_ratios = [ratios[i] for i in quiet]
        for name in setups:
            spread = _spread(rates[name])
            print(f"{name:>12}: median {spread['median']:8.1f} calls/s (min {spread['min']}, max {spread['max']})")
        print(
            f"{'ratio':>12}: {ratio:.2f}x of the medians (per round {', '.join(f'{r:.2f}' for r in ratios)});"
            f" goal 1.6x on {os.cpu_count()} cores shared with the generator and HAProxy"
        )
        if quiet_ratios:
            print(
                f"{'quiet':>12}: {statistics.median(quiet_ratios):.2f}x median of the {len(quiet)} round(s) with"
                f" other work under {args.quiet:g} cores ({', '.join(f'{r:.2f}' for r in quiet_ratios)})"
            )
        else:
            print(f"{'quiet':>12}: no round had other work under {args.quiet:g} cores during both runs")
        report = {
            "started": started,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "generator": args.generator,
            "connections": args.connections,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "haproxy_threads": args.haproxy_threads,
            "runs": runs,
            "calls_per_second": {name: _spread(values) for name, values in rates.items()},
            "ratio": round(ratio, 2),
            "ratios": [round(r, 2) for r in ratios],
            "quiet_cores": args.quiet,
            "quiet_rounds": [i + 1 for i in quiet],
            "quiet_ratio": round(statistics.median(quiet_ratios), 2) if quiet_ratios else None,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        generator.close()
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
