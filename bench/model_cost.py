"""What the typed data model costs per message, against the floor's plain dicts.

    python -m bench.model_cost

An upper bound for the question "what would a cheaper typed model give?":
times, in this process with warm caches (best of 7 repeats), the model's own
work in one W1 call (build the attrs objects, unstructure them, decode the
peer's JSON value into them, on both sides) and in one W4 notification, and
the dicts the floor builds instead. JSON text coding, the engine's checks and
the trio work are left out: a model that cost nothing would still pay them.
Subtracting the net figure from a workload's latency gives the best that
workload could reach with any typed model (bench/README.md, "Upper bounds").
"""

import json
import sys
import timeit
from typing import Any

from mcp_ref.basic.jsonrpc import dumps, loads
from mcp_ref.schema import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    JSONRPCResultResponse,
    ProgressNotification,
    ProgressNotificationParams,
    TextContent,
)
from mcp_ref.schema._converter import converter_for, decode

REVISION = "2025-11-25"
#: the classes the timed statements build
_MODEL_CLASSES = (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    JSONRPCResultResponse,
    ProgressNotification,
    ProgressNotificationParams,
    TextContent,
)


def _us(stmt: str, env: dict[str, Any], number: int) -> float:
    """Best of 7 repeats, in microseconds per execution."""
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=7)) / number * 1e6


def statements() -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """The namespace and the statements timed, by group ("W1 model", "W1 floor", ...)."""
    conv = converter_for(REVISION)
    request = CallToolRequest(id=1, params=CallToolRequestParams(name="echo", arguments={"text": "hello"}))
    response = JSONRPCResultResponse(id=1, result=CallToolResult(content=[TextContent(text="hello")]))
    note = ProgressNotification(
        params=ProgressNotificationParams(progress_token=1, progress=5.0, total=10.0, message=None)
    )
    env: dict[str, Any] = {
        **{cls.__name__: cls for cls in _MODEL_CLASSES},
        "decode": decode,
        "conv": conv,
        "request": request,
        "response": response,
        "note": note,
        # what arrives from the peer: the JSON value after loads()
        "request_value": loads(dumps(conv.unstructure(request))),
        "result_value": loads(dumps(conv.unstructure(response)))["result"],
        "note_value": loads(dumps(conv.unstructure(note))),
    }
    w1_model = {
        "client builds the request": "CallToolRequest(id=1, params=CallToolRequestParams("
        "name='echo', arguments={'text': 'hello'}))",
        "client unstructures it": "conv.unstructure(request)",
        "server decodes it": "decode(request_value, CallToolRequest)",
        "server builds the response": "JSONRPCResultResponse(id=1, result=CallToolResult("
        "content=[TextContent(text='hello')]))",
        "server unstructures it": "conv.unstructure(response)",
        "client decodes the result": "decode(result_value, CallToolResult)",
    }
    w1_floor = {
        "floor builds the request": "{'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call',"
        " 'params': {'name': 'echo', 'arguments': {'text': 'hello'}}}",
        "floor builds the response": "{'jsonrpc': '2.0', 'id': 1,"
        " 'result': {'content': [{'type': 'text', 'text': 'hello'}]}}",
    }
    w4_model = {
        "server builds the notification": "ProgressNotification(params=ProgressNotificationParams("
        "progress_token=1, progress=5.0, total=10.0, message=None))",
        "server unstructures it": "conv.unstructure(note)",
        "client decodes it": "decode(note_value, ProgressNotification)",
    }
    w4_floor = {
        "floor builds the notification": "{'jsonrpc': '2.0', 'method': 'notifications/progress',"
        " 'params': {'progressToken': 1, 'progress': 5.0, 'total': 10.0}}",
    }
    return env, {"W1 model": w1_model, "W1 floor": w1_floor, "W4 model": w4_model, "W4 floor": w4_floor}


def measure(number: int = 50_000) -> dict[str, dict[str, float]]:
    env, groups = statements()
    return {name: {label: _us(stmt, env, number) for label, stmt in stmts.items()} for name, stmts in groups.items()}


def main() -> int:
    number = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    results = measure(number)
    for name, rows in results.items():
        print(name)
        for label, us in rows.items():
            print(f"  {us:6.2f} us  {label}")
        print(f"  {sum(rows.values()):6.2f} us  total")
    for w in ("W1", "W4"):
        net = sum(results[f"{w} model"].values()) - sum(results[f"{w} floor"].values())
        print(f"{w}: the typed model costs {net:.2f} us more than the floor's dicts per message exchange")
    print(json.dumps({k: round(sum(v.values()), 3) for k, v in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
