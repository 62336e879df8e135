"""Smoke tests of the benchmark harness (bench/): it measures what it claims. Nothing is timed."""

import math
from typing import Any

import pytest
import trio

from bench.adapters import ADAPTERS
from bench.common import Probe, percentile
from bench.run import aggregate, report


@pytest.mark.parametrize("impl", ["floor", "mcp_ref"])
async def test_adapters_answer_every_tool_in_memory(impl: str) -> None:
    adapter = ADAPTERS[impl]
    probe = Probe()
    probe.block_target = 2
    async with adapter.memory(probe, tasks=True) as client:
        assert await client.echo("hi") == "hi"
        seen: list[float] = []

        async def on_progress(value: float) -> None:
            seen.append(value)

        await client.progress(3, on_progress)
        assert seen == [1, 2, 3]
        assert await client.task_echo("as a task") == "as a task"
        assert await client.plain_task_tool("plain") == "plain"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.block)
            nursery.start_soon(client.block)
            with trio.fail_after(5):
                await probe.all_blocked.wait()
            probe.release.set()


@pytest.mark.parametrize("impl", ["floor", "mcp_ref"])
async def test_cancelling_the_caller_reaches_the_handler(impl: str) -> None:
    probe = Probe()
    async with ADAPTERS[impl].memory(probe) as client:
        async with trio.open_nursery() as nursery:
            scope = trio.CancelScope()

            async def caller() -> None:
                with scope:
                    await client.hang()

            nursery.start_soon(caller)
            with trio.fail_after(5):
                await probe.hang_entered.wait()
            scope.cancel()
            with trio.fail_after(5):
                await probe.cancel_seen.wait()
        assert await client.echo("still alive") == "still alive"


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) in (50.0, 51.0)
    assert percentile(values, 99) == 99.0
    assert percentile(values, 0) == 1.0
    assert percentile([3.0], 99) == 3.0
    with pytest.raises(ValueError):
        percentile([], 50)


def _round(value: float) -> dict[str, Any]:
    return {"metrics": {"p50_us": value, "calls_per_s": 1e6 / value}}


def test_ratios_are_medians_of_same_round_ratios() -> None:
    raw = {
        "W1": {
            "floor": [_round(10), _round(20), _round(40)],
            "mcp_ref": [_round(15), _round(20), _round(100)],
            "sdk": [{"skip": "not today"}] * 3,
        }
    }
    summary = aggregate(raw)["W1"]
    # per-round ratios 1.5, 1.0, 2.5 -> median 1.5 (the ratio of medians would be 20/20)
    assert math.isclose(summary["ratios"]["p50_us"]["mcp_ref"], 1.5)
    assert "sdk" not in summary["ratios"]["p50_us"]
    assert summary["skips"]["sdk"] == "not today"
    assert summary["impls"]["mcp_ref"]["p50_us"] == 20
    info = {
        "date": "today",
        "runs": 3,
        "quick": True,
        "wall_s": 1.0,
        "machine": {
            "cpu": "x",
            "cores": 2,
            "memory_gib": 1,
            "python": "3.11",
            "platform": "p",
            "load_average_at_start": None,
        },
    }
    text = report(aggregate(raw), info)
    assert "| W1 sequential tools/call, in memory | p50_us | 20.0 | 20.0 | skipped | 1.50 | - |" in text
    assert "W1 sequential calls, memory (p50): 1.50x (goal <= 1.5x) -- met" in text


def test_model_cost_compares_like_with_like() -> None:
    """bench.model_cost times the model's work against the floor's dicts: the
    model's objects must encode to exactly those dicts and decode back to
    equal objects, or the bound in bench/README.md compares different work."""
    from bench.model_cost import statements
    from mcp_ref.basic.jsonrpc import dumps, loads

    env, groups = statements()
    built = {
        group: {label: eval(stmt, env) for label, stmt in rows.items()}  # the statements bench.model_cost times
        for group, rows in groups.items()
    }
    w1, w4 = built["W1 model"], built["W4 model"]
    floor_request, floor_response = built["W1 floor"].values()
    (floor_note,) = built["W4 floor"].values()
    assert w1["client unstructures it"] == floor_request
    assert w1["server unstructures it"] == floor_response
    assert w4["server unstructures it"] == floor_note
    assert w1["client builds the request"] == env["request"]
    assert w1["server decodes it"] == env["request"]
    assert w1["server builds the response"] == env["response"]
    assert w1["client decodes the result"] == env["response"].result
    assert w4["server builds the notification"] == w4["client decodes it"] == env["note"]
    # the decoded values are what a peer would send: the JSON text of the floor's dicts
    assert env["request_value"] == loads(dumps(floor_request))
    assert env["note_value"] == loads(dumps(floor_note))
