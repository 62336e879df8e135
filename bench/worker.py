"""Run one workload once, for one implementation, in this fresh interpreter.

``python -m bench.worker W1 mcp_ref '{"calls": 100, "warmup": 10}'`` prints
one line of JSON: ``{"metrics": {...}}`` or ``{"skip": "reason"}``.
"""

import json
import sys

import trio

from .adapters import ADAPTERS
from .common import Skip
from .workloads import WORKLOADS


def main(argv: list[str]) -> int:
    name, impl, sizes = argv[0], argv[1], json.loads(argv[2])
    workload = WORKLOADS[name].run
    adapter = ADAPTERS[impl]
    try:
        metrics = trio.run(workload, adapter, sizes)
    except Skip as e:
        print(json.dumps({"skip": str(e)}))
        return 0
    except BaseExceptionGroup as group:
        skips = [e for e in group.exceptions if isinstance(e, Skip)]
        if skips and len(skips) == len(group.exceptions):
            print(json.dumps({"skip": str(skips[0])}))
            return 0
        raise
    print(json.dumps({"metrics": metrics}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
