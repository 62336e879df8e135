"""Profile one workload in this process (not part of ``make bench``; needs the bench extra).

    python -m bench.profile W1                     # pyinstrument, mcp_ref, full sizes
    python -m bench.profile W4 --impl sdk --tool cprofile --sort tottime
    python -m bench.profile W1 --sizes '{"calls": 5000, "warmup": 100}'

pyinstrument prints a call tree (where wall time goes, by caller); cProfile
prints the functions with the most own time. Both slow the code down, so read
proportions, not absolute times.
"""

import argparse
import json
import sys
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.adapters import ADAPTERS  # noqa: E402
from bench.workloads import WORKLOADS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--impl", default="mcp_ref", choices=sorted(ADAPTERS))
    parser.add_argument("--tool", default="pyinstrument", choices=["pyinstrument", "cprofile"])
    parser.add_argument("--sizes", help="JSON sizes (default: the full sizes)")
    parser.add_argument("--sort", default="tottime", help="cProfile sort key")
    parser.add_argument("--limit", type=int, default=40, help="cProfile rows")
    parser.add_argument("--html", type=Path, help="pyinstrument: also write an HTML report here")
    args = parser.parse_args(argv)
    spec = WORKLOADS[args.workload]
    sizes = json.loads(args.sizes) if args.sizes else spec.full
    adapter = ADAPTERS[args.impl]
    if args.tool == "pyinstrument":
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0002)
        profiler.start()
        metrics = trio.run(spec.run, adapter, sizes)
        profiler.stop()
        print(profiler.output_text(unicode=True, color=False, show_all=False))
        if args.html:
            args.html.write_text(profiler.output_html())
    else:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        metrics = trio.run(spec.run, adapter, sizes)
        prof.disable()
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.limit)
    print(json.dumps(metrics))
    return 0


if __name__ == "__main__":
    sys.exit(main())
