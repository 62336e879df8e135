"""Instructions per iteration of a workload, counted by valgrind (stable on a busy machine).

    python -m bench.icount W1                       # mcp_ref, instructions per call
    python -m bench.icount W9 --impl floor,mcp_ref  # both, and the ratio
    python -m bench.icount W1 --repeat 3            # three counts each (their spread)
    python -m bench.icount --import "import mcp_ref" --import "import trio"

Wall-clock times on a machine other work is loading are noise; the number of
instructions the CPU executes is not (within a fraction of a percent). Each
count runs the workload's worker (``python -m bench.worker``) under
``valgrind --tool=callgrind`` twice, with a small and a large iteration
count, child processes (the server of W3, W9, W10) included, and divides the
difference by the difference in iterations: start-up, imports and warm-up
cancel out. ``PYTHONHASHSEED=0`` keeps dict and set layouts the same from
run to run. A/B: count on one commit, then on the other (``git stash`` /
``git checkout``), same command.

Instructions are not time (a cache miss costs more than an add), but for the
same Python code path on the same interpreter they track CPU time closely;
bench/README.md says where the two were compared. Under callgrind the code
runs about 50 times slower: keep the iteration counts small.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.run import worker_env  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402

#: per workload: the size that is varied, its small and large value, and the
#: iterations one unit of it stands for (a burst of 100 calls is 100 calls)
PLAN: dict[str, tuple[str, int, int]] = {
    "W1": ("calls", 100, 600),
    "W2": ("bursts", 2, 8),
    "W3": ("calls", 100, 600),
    "W4": ("notifications", 500, 3000),
    "W5": ("repeats", 20, 120),
    "W8": ("repeats", 30, 180),
    "W9": ("calls", 50, 300),
    "W10": ("calls", 2, 12),
    "W11": ("calls", 100, 600),
    "W11H": ("calls", 50, 300),
}
#: fixed sizes under callgrind (the rest of the workload's quick sizes stays)
FIXED: dict[str, dict[str, int]] = {
    "W2": {"warmup_bursts": 1},
    "W4": {"repeats": 1},
    "W10": {"clients": 16, "warmup_calls": 2, "seconds": 0, "warmup_s": 0},
}


def _per_unit(name: str, sizes: dict[str, int]) -> int:
    if name.startswith("W2"):
        return sizes["burst"]
    if name.startswith("W10"):
        return sizes["clients"]
    return 1


def callgrind(argv: list[str], *, children: bool = True) -> dict[str, int]:
    """Run ``argv`` under callgrind; instructions by process (``"main"`` and ``"children"``)."""
    with tempfile.TemporaryDirectory(prefix="icount") as tmp:
        out = os.path.join(tmp, "cg.%p")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--quiet"]
        if children:
            # (not the helpers some libraries run to find a shared library)
            cmd += ["--trace-children=yes", "--trace-children-skip=*/ldconfig,*/sh,*/uname"]
        # (a server started under callgrind on a busy machine may take minutes to listen)
        env = worker_env() | {"PYTHONHASHSEED": "0", "BENCH_SPAWN_TIMEOUT": "600"}
        proc = subprocess.run(cmd + argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{argv} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        main, children = None, 0
        for path in Path(tmp).glob("cg.*"):
            text = path.read_text(errors="replace")
            m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
            cmd_line = re.search(r"^cmd:\s*(.*)$", text, re.M)
            if m is None or cmd_line is None:
                continue
            # the process we ran is the one with our command line (the others are its children)
            if cmd_line.group(1).split() == " ".join(argv).split():
                if main is not None:
                    raise RuntimeError(f"two processes ran {argv}")
                main = int(m.group(1))
            else:
                children += int(m.group(1))
    if main is None:
        raise RuntimeError(f"no callgrind output for {argv}")
    return {"main": main, "children": children}


def count_workload(name: str, impl: str) -> dict[str, float]:
    """Instructions per iteration of workload ``name`` for ``impl``: the worker's own, its children's, total."""
    base = WORKLOADS[name]
    key, small, large = PLAN[name.rstrip("bJ")]
    sizes = {**base.quick, **FIXED.get(name.rstrip("bJ"), {})}
    runs = {}
    for n in (small, large):
        s = {**sizes, key: n}
        runs[n] = callgrind([sys.executable, "-m", "bench.worker", name, impl, json.dumps(s)])
    units = (large - small) * _per_unit(name, sizes)
    per = {part: (runs[large][part] - runs[small][part]) / units for part in ("main", "children")}
    per["total"] = per["main"] + per["children"]
    return per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", nargs="?", help=f"one of {sorted(PLAN)} (or their b/J variants)")
    parser.add_argument("--impl", default="mcp_ref", help="comma-separated: floor,mcp_ref,sdk")
    parser.add_argument("--repeat", type=int, default=1, help="counts per implementation")
    parser.add_argument(
        "--import", dest="imports", action="append", default=[], help="count `python -c STATEMENT` instead"
    )
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, float]]] = {}
    if args.imports:
        for stmt in args.imports:
            for _ in range(args.repeat):
                c = callgrind([sys.executable, "-c", stmt], children=False)
                results.setdefault(stmt, []).append({"total": c["main"]})
                print(f"{stmt!r}: {c['main'] / 1e6:,.1f} M instructions", flush=True)
    elif args.workload:
        if args.workload not in WORKLOADS or args.workload.rstrip("bJ") not in PLAN:
            parser.error(f"no instruction-count plan for {args.workload}")
        for impl in args.impl.split(","):
            for _ in range(args.repeat):
                per = count_workload(args.workload, impl)
                results.setdefault(impl, []).append(per)
                print(
                    f"{args.workload} {impl}: {per['total']:,.0f} instructions per iteration "
                    f"(this process {per['main']:,.0f}, its children {per['children']:,.0f})",
                    flush=True,
                )
        medians = {impl: statistics.median(r["total"] for r in rs) for impl, rs in results.items()}
        if "floor" in medians:
            for impl, value in medians.items():
                if impl != "floor":
                    print(f"{args.workload} {impl}/floor: {value / medians['floor']:.2f}")
    else:
        parser.error("a workload or --import")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
