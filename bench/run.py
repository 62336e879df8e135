"""``make bench``: every workload, every implementation, several fresh processes.

    python bench/run.py                 # full run (5 rounds)
    python bench/run.py --quick         # smaller sizes, 3 rounds (under 2 minutes)
    python bench/run.py --only W1,W5 --runs 3 --impl mcp_ref,floor

Each (workload, implementation) pair runs in a new interpreter
(``python -m bench.worker``) once per round; the order of implementations
rotates between rounds. Reported: the median of each metric over the rounds,
and same-run ratios -- for each round, mcp_ref/floor, sdk/floor and sdk/mcp_ref of the
workload's primary metric (lower is better for every primary metric), then
the median of those per-round ratios. Results go to bench/results/latest.json
and latest.md (git-ignored); bench/README.md records a reference run.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.workloads import WORKLOADS  # noqa: E402

IMPLS = ("floor", "mcp_ref", "sdk")
RESULTS = ROOT / "bench" / "results"


class Goal(NamedTuple):
    label: str
    workload: str
    metric: str
    limit: float
    #: "floor": mcp_ref/floor <= limit; "sdk": sdk/mcp_ref >= limit (mcp_ref is limit
    #: times better); "value": mcp_ref's own median <= limit
    kind: str = "floor"


#: goals of issue 22 (W5, W6: of issue 8; W11, W11H: of issue 28)
GOALS = [
    Goal("W1 sequential calls, memory (p50)", "W1", "p50_us", 1.6),
    Goal("W1b the same, one-message buffer", "W1b", "p50_us", 1.6),
    Goal("W2 bursts of 100, memory (p50 burst)", "W2", "burst_p50_us_per_call", 1.6),
    Goal("W2b the same, one-message buffer", "W2b", "burst_p50_us_per_call", 1.6),
    Goal("W3 sequential calls, stdio (p50)", "W3", "p50_us", 1.5),
    Goal("W4 progress notifications", "W4", "us_per_notification", 2.0),
    Goal("W4b the same, one-message buffer", "W4b", "us_per_notification", 2.0),
    Goal("W5 cancellation latency", "W5", "p50_us", 1.5),
    Goal("W6 memory per pending call", "W6", "bytes_per_pending", 1.5),
    Goal("W7 spawn to initialize", "W7", "spawn_to_init_ms", 1.5),
    Goal("W7 import time vs `import trio`", "W7", "import_ms", 1.5),
    Goal("W8 task-augmented call (p50)", "W8", "task_p50_us", 2.0),
    Goal("W9 Streamable HTTP, SSE answers (p50)", "W9", "p50_us", 2.5),
    Goal("W9J Streamable HTTP, JSON answers (p50)", "W9J", "p50_us", 2.0),
    Goal("W10 64 HTTP clients: calls/s at least 4x the SDK's", "W10", "us_per_call", 4.0, "sdk"),
    Goal("W10 64 HTTP clients: p99 under 5x p50", "W10", "p99_over_p50", 5.0, "value"),
    # issue 28: a 2026-07-28 tools/call, CPU of both ends per call (calls per CPU-second)
    Goal("W11 2026-07-28 stdio: calls per CPU-s at least 3x the SDK's", "W11", "total_cpu_us_per_call", 3.0, "sdk"),
    Goal("W11 2026-07-28 stdio: CPU per call", "W11", "total_cpu_us_per_call", 2.0),
    Goal("W11H 2026-07-28 HTTP: calls per CPU-s at least 3x the SDK's", "W11H", "total_cpu_us_per_call", 3.0, "sdk"),
    Goal("W11H 2026-07-28 HTTP: CPU per call", "W11H", "total_cpu_us_per_call", 2.0),
]


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # byte-code caches are what an installed package has; without them every
    # import would compile from source and W7 would measure the compiler
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def run_worker(workload: str, impl: str, sizes: dict[str, int], timeout: float) -> dict[str, Any]:
    argv = [sys.executable, "-m", "bench.worker", workload, impl, json.dumps(sizes)]
    try:
        proc = subprocess.run(
            argv, cwd=ROOT, env=worker_env(), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g}s"}
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        return {"error": f"exit status {proc.returncode}:\n{tail}"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"error": f"no result on stdout: {proc.stdout[-500:]!r} {proc.stderr[-500:]!r}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = None
    try:
        with open("/proc/meminfo") as f:
            mem_gib = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    versions: dict[str, str | None] = {}
    for dist in ("trio", "attrs", "cattrs", "mcp", "anyio", "pydantic", "jsonschema", "h11"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "versions": versions,
    }


def aggregate(raw: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Medians per metric, and medians of the per-round ratios of the primary metric."""
    summary: dict[str, Any] = {}
    for name, per_impl in raw.items():
        primary = WORKLOADS[name].primary
        entry: dict[str, Any] = {"primary": primary, "impls": {}, "ratios": {}, "skips": {}, "errors": {}}
        for impl, rounds in per_impl.items():
            ok = [r["metrics"] for r in rounds if "metrics" in r]
            skips = {r["skip"] for r in rounds if "skip" in r}
            errors = [r["error"] for r in rounds if "error" in r]
            if skips:
                entry["skips"][impl] = sorted(skips)[0]
            if errors:
                entry["errors"][impl] = errors
            if ok:
                keys = [k for k in ok[0] if all(k in m for m in ok)]
                entry["impls"][impl] = {k: statistics.median(m[k] for m in ok) for k in keys} | {"rounds": len(ok)}
        for metric in (primary, *WORKLOADS[name].shown):
            # "mcp_ref", "sdk": over the floor; "sdk/mcp_ref": the SDK over mcp_ref
            for key, top, bottom in (
                ("mcp_ref", "mcp_ref", "floor"),
                ("sdk", "sdk", "floor"),
                ("sdk/mcp_ref", "sdk", "mcp_ref"),
            ):
                ratios = []
                for mine, base in zip(per_impl.get(top, []), per_impl.get(bottom, [])):
                    if "metrics" in mine and "metrics" in base and base["metrics"].get(metric, 0) > 0:
                        ratios.append(mine["metrics"][metric] / base["metrics"][metric])
                if ratios:
                    entry["ratios"].setdefault(metric, {})[key] = statistics.median(ratios)
        summary[name] = entry
    return summary


def _fmt(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def report(summary: dict[str, Any], info: dict[str, Any]) -> str:
    lines = [
        f"# mcp_ref benchmark results -- {info['date']}",
        "",
        f"Machine: {info['machine']['cpu']}, {info['machine']['cores']} cores, "
        f"{info['machine']['memory_gib']} GiB, Python {info['machine']['python']}, {info['machine']['platform']}.",
        f"Rounds: {info['runs']} fresh processes per workload and implementation"
        f"{' (--quick sizes)' if info['quick'] else ''}; wall time {info['wall_s']:.0f} s; "
        f"load average at start {info['machine']['load_average_at_start']}.",
        "",
        "Medians over the rounds; ratios are medians of same-round ratios "
        "(for times and memory lower is better: 2.0 means twice the floor's; "
        "sdk/mcp_ref is how many times mcp_ref is better than the SDK).",
        "",
        "| workload | metric | floor | mcp_ref | sdk | mcp_ref/floor | sdk/floor | sdk/mcp_ref |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in summary.items():
        doc = WORKLOADS[name].label
        for metric in (entry["primary"], *WORKLOADS[name].shown):
            cells = []
            for impl in IMPLS:
                if metric in entry["impls"].get(impl, {}):
                    cells.append(_fmt(entry["impls"][impl][metric]))
                elif impl in entry["skips"]:
                    cells.append("skipped")
                elif impl in entry["errors"]:
                    cells.append("error")
                else:
                    cells.append("-")
            ratio = entry["ratios"].get(metric, {})
            shown = [f"{ratio[key]:.2f}" if key in ratio else "-" for key in ("mcp_ref", "sdk", "sdk/mcp_ref")]
            label = f"{name} {doc}" if metric == entry["primary"] else f"{name}"
            lines.append(f"| {label} | {metric} | {' | '.join(cells)} | {' | '.join(shown)} |")
    lines += ["", "## Goals (same-run median ratios)", ""]
    for goal in GOALS:
        entry = summary.get(goal.workload, {})
        if goal.kind == "value":
            value = entry.get("impls", {}).get("mcp_ref", {}).get(goal.metric)
            met = value is not None and value <= goal.limit
            text = f"{value:.2f} (goal <= {goal.limit})" if value is not None else ""
        elif goal.kind == "sdk":
            value = entry.get("ratios", {}).get(goal.metric, {}).get("sdk/mcp_ref")
            met = value is not None and value >= goal.limit
            text = f"{value:.2f}x the SDK (goal >= {goal.limit}x)" if value is not None else ""
        else:
            value = entry.get("ratios", {}).get(goal.metric, {}).get("mcp_ref")
            met = value is not None and value <= goal.limit
            text = f"{value:.2f}x the floor (goal <= {goal.limit}x)" if value is not None else ""
        if value is None:
            lines.append(f"- {goal.label}: not measured")
        else:
            lines.append(f"- {goal.label}: {text} -- {'met' if met else 'NOT met'}")
    lines += ["", "## All metrics (medians)", ""]
    for name, entry in summary.items():
        for impl, metrics in entry["impls"].items():
            shown = ", ".join(f"{k}={_fmt(v)}" for k, v in metrics.items() if k != "rounds")
            lines.append(f"- {name} {impl} ({metrics['rounds']} rounds): {shown}")
        for impl, reason in entry["skips"].items():
            lines.append(f"- {name} {impl}: skipped -- {reason}")
        for impl, errors in entry["errors"].items():
            lines.append(f"- {name} {impl}: {len(errors)} failed rounds, e.g. {errors[0].splitlines()[0]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and 3 rounds")
    parser.add_argument("--runs", type=int, help="rounds of fresh processes (default 5, --quick 3)")
    parser.add_argument("--only", help="comma-separated workloads, e.g. W1,W5")
    parser.add_argument("--impl", default=",".join(IMPLS), help="comma-separated: floor,mcp_ref,sdk")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per worker process")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    args = parser.parse_args(argv)
    runs = args.runs or (3 if args.quick else 5)
    names = args.only.split(",") if args.only else list(WORKLOADS)
    impls = args.impl.split(",")
    unknown = [n for n in names if n not in WORKLOADS] + [i for i in impls if i not in IMPLS]
    if unknown:
        parser.error(f"unknown workloads or implementations: {unknown}")

    info: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": runs,
        "quick": args.quick,
        "machine": machine(),
    }
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {n: {i: [] for i in impls} for n in names}
    start = time.monotonic()
    for r in range(runs):
        order = impls[r % len(impls) :] + impls[: r % len(impls)]
        for name in names:
            sizes = WORKLOADS[name].quick if args.quick else WORKLOADS[name].full
            for impl in order:
                t = time.monotonic()
                result = run_worker(name, impl, sizes, args.timeout)
                raw[name][impl].append(result)
                status = "skip" if "skip" in result else ("ERROR" if "error" in result else "ok")
                print(f"[round {r + 1}/{runs}] {name} {impl:8} {status:5} {time.monotonic() - t:6.1f}s", flush=True)
                if "error" in result:
                    print("   " + result["error"].replace("\n", "\n   "), flush=True)
    info["wall_s"] = time.monotonic() - start
    summary = aggregate(raw)
    text = report(summary, info)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"info": info, "summary": summary, "raw": raw}, indent=1))
    args.out.with_suffix(".md").write_text(text)
    print()
    print(text)
    print(f"(written to {args.out} and {args.out.with_suffix('.md')})")
    failed = any(entry["errors"] for entry in summary.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
