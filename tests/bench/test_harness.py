"""Smoke tests of the benchmark harness (bench/): it measures what it claims. Nothing is timed."""

import math
from typing import Any

import pytest
import trio

from bench.adapters import ADAPTERS
from bench.common import Probe, percentile
from bench.load import open_raw_session
from bench.run import GOALS, aggregate, report
from bench.workloads import WORKLOADS


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
    assert "| W1 sequential tools/call, in memory | p50_us | 20.0 | 20.0 | skipped | 1.50 | - | - |" in text
    assert "W1 sequential calls, memory (p50): 1.50x the floor (goal <= 1.6x) -- met" in text


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


def _w10_round(floor: float, ref: float, sdk: float, p99_over_p50: float) -> dict[str, list[dict[str, Any]]]:
    def one(us: float) -> dict[str, Any]:
        return {"metrics": {"us_per_call": us, "p99_over_p50": p99_over_p50}}

    return {"floor": [one(floor)], "mcp_ref": [one(ref)], "sdk": [one(sdk)]}


def test_goals_against_the_sdk_and_on_a_value() -> None:
    """W10's goals: mcp_ref's calls/s at least 4x the SDK's (a ratio of the SDK over
    mcp_ref, higher is better), and p99 under 5x p50 (mcp_ref's own value)."""
    info = {
        "date": "today",
        "runs": 1,
        "quick": True,
        "wall_s": 1.0,
        "machine": {"cpu": "x", "cores": 2, "memory_gib": 1, "python": "3.11", "platform": "p"}
        | {"load_average_at_start": None},
    }
    met = report(aggregate({"W10": _w10_round(100, 250, 1000, 3.0)}), info)
    assert "calls/s at least 4x the SDK's: 4.00x the SDK (goal >= 4.0x) -- met" in met
    assert "p99 under 5x p50: 3.00 (goal <= 5.0) -- met" in met
    missed = report(aggregate({"W10": _w10_round(100, 500, 1000, 6.0)}), info)
    assert "2.00x the SDK (goal >= 4.0x) -- NOT met" in missed
    assert "6.00 (goal <= 5.0) -- NOT met" in missed
    assert {g.workload for g in GOALS} <= set(WORKLOADS)


def test_variants_differ_only_in_their_mode() -> None:
    for name in ("W1", "W2", "W4", "W5", "W6", "W8"):
        variant = WORKLOADS[name + "b"]
        assert variant.run is WORKLOADS[name].run
        assert variant.full == {**WORKLOADS[name].full, "buffer": 1}
        assert variant.quick == {**WORKLOADS[name].quick, "buffer": 1}
    assert WORKLOADS["W9J"].run is WORKLOADS["W9"].run
    assert WORKLOADS["W9J"].full == {**WORKLOADS["W9"].full, "json": 1}


@pytest.mark.parametrize("impl", ["floor", "mcp_ref"])
async def test_one_message_buffer_reaches_the_transport(impl: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """W1b runs on a channel pair that holds one message, W1 on the implementation's default."""
    import bench.floor
    import mcp_ref

    module, name = (bench.floor, "memory_pair") if impl == "floor" else (mcp_ref, "memory_channel_pair")
    made: list[Any] = []
    original = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        pair = original(*args, **kwargs)
        made.append(pair)
        return pair

    monkeypatch.setattr(module, name, spy)
    if impl == "mcp_ref":
        # the default path goes through memory_session_pair, which imported the name earlier
        monkeypatch.setattr("mcp_ref.testing.memory_channel_pair", spy)

    def sizes(pair: Any) -> list[float]:
        return [(end._send_ch if impl == "floor" else end._send).statistics().max_buffer_size for end in pair]

    spec = WORKLOADS["W1b"]
    await spec.run(ADAPTERS[impl], {**spec.quick, "calls": 3, "warmup": 1})
    assert sizes(made.pop()) == [1, 1]
    spec = WORKLOADS["W1"]
    await spec.run(ADAPTERS[impl], {**spec.quick, "calls": 3, "warmup": 1})
    assert sizes(made.pop()) == [1024, 1024]


async def test_the_sdk_adapter_answers_in_memory() -> None:
    async with ADAPTERS["sdk"].memory(Probe(), buffer=1) as client:
        assert await client.echo("hi") == "hi"
        seen: list[float] = []

        async def on_progress(value: float) -> None:
            seen.append(value)

        await client.progress(3, on_progress)
        assert seen == [1, 2, 3]


@pytest.mark.parametrize("json_mode", [False, True], ids=["sse", "json"])
@pytest.mark.parametrize("impl", ["floor", "mcp_ref", "sdk"])
async def test_http_adapters_answer_in_the_mode_asked(impl: str, json_mode: bool) -> None:
    """W9 and W9J: each implementation's client gets its echo from its own server, and
    the server really answers with an SSE stream (W9) or a JSON body (W9J)."""
    with trio.fail_after(60):
        async with ADAPTERS[impl].http(json=json_mode) as client:
            assert await client.echo("over http") == "over http"
            raw = await open_raw_session(client.url)
            try:
                for _ in range(2):
                    await raw.echo("raw")
                expected = "application/json" if json_mode else "text/event-stream"
                assert raw.last_content_type.split(";")[0] == expected
                assert raw.last_events == (0 if json_mode else 1)
            finally:
                await raw.aclose()


@pytest.mark.parametrize("impl", ["floor", "mcp_ref", "sdk"])
async def test_http_load_and_idle_sessions_run(impl: str) -> None:
    """W10 and W10i end to end on small sizes: every call answered and counted (nothing timed)."""
    with trio.fail_after(120):
        metrics = await WORKLOADS["W10"].run(ADAPTERS[impl], {"clients": 3, "calls": 4, "warmup_calls": 1})
        assert metrics["calls_per_s"] > 0 and metrics["p99_us"] >= metrics["p50_us"] > 0
        assert metrics["server_cpu_us_per_call"] >= 0
        assert set(WORKLOADS["W10"].shown) <= metrics.keys()
        idle = await WORKLOADS["W10i"].run(ADAPTERS[impl], {"sessions": 5})
        assert set(idle) == {"bytes_per_session", "kib_per_session", "ms_per_session_opened"}


@pytest.mark.parametrize("name", ["W11", "W11H"])
@pytest.mark.parametrize("impl", ["floor", "mcp_ref", "sdk"])
async def test_modern_workloads_speak_2026_07_28(impl: str, name: str) -> None:
    """W11 (stdio) and W11H (HTTP): each implementation's client gets its echo from its own
    server in 2026-07-28 (no initialize), and the CPU of both ends is counted."""
    with trio.fail_after(90):
        metrics = await WORKLOADS[name].run(ADAPTERS[impl], {**WORKLOADS[name].quick, "calls": 5, "warmup": 2})
    assert set(WORKLOADS[name].shown) <= metrics.keys()
    assert metrics["server_cpu_us_per_call"] > 0 and metrics["client_cpu_us_per_call"] > 0
    assert math.isclose(
        metrics["total_cpu_us_per_call"], metrics["server_cpu_us_per_call"] + metrics["client_cpu_us_per_call"]
    )
    assert math.isclose(metrics["calls_per_cpu_s"], 1e6 / metrics["total_cpu_us_per_call"])


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_modern_clients_stay_modern(transport: str) -> None:
    """The clients of W11/W11H do not fall back to a 2025 session: mcp_ref's says 2026-07-28,
    and the floor's requests carry the revision in _meta (a 2025 floor server would not
    answer resultType)."""
    for impl in ("mcp_ref", "floor"):
        adapter = ADAPTERS[impl]
        opener = adapter.http(modern=True) if transport == "http" else adapter.stdio(modern=True)
        with trio.fail_after(60):
            async with opener as bench_client:
                if impl == "mcp_ref":
                    assert bench_client.client.protocol_version == "2026-07-28"
                else:
                    result = await bench_client.client.call_tool("echo", {"text": "x"})
                    assert result["resultType"] == "complete"


async def test_the_modern_http_floor_checks_headers_against_the_body() -> None:
    """The 2026-07-28 floor does the one check a modern server must make on every request:
    Mcp-Method / Mcp-Name against the body (-32020, HTTP 400)."""
    from bench.floor import MODERN_META, FloorError, http_floor_client

    async with ADAPTERS["floor"].http_server() as (url, pid):
        async with http_floor_client(url, modern=True) as client:
            assert (await client.call_tool("echo", {"text": "ok"}))["content"][0]["text"] == "ok"
            # the body names echo, the headers another tool: refused before any tool runs
            client.modern = False  # (headers written by hand below)
            client.headers += [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "not-echo"),
            ]
            with pytest.raises(FloorError, match="-32020"):
                await client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": MODERN_META})
