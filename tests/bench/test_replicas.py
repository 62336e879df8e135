"""Smoke test of the replicas benchmark (bench/replicas.py): it runs both setups through a real
HAProxy, interleaved, and reports what it says. Nothing is timed: the numbers are not judged."""

import json
import os
import shutil
from pathlib import Path

import pytest

from bench import replicas
from mcp_ref.testing.haproxy import start_haproxy


def _haproxy_or_skip() -> None:
    try:
        start_haproxy([("r1", 1)]).close()
    except Exception as e:  # (HAProxyNotInstalled; .ci/run installs it)
        if os.environ.get("MCP_REF_REQUIRE_HAPROXY"):
            pytest.fail(f"haproxy: {e}")
        pytest.skip(f"{e}; .ci/run installs it")


def _run(tmp_path: Path, *args: str) -> dict:  # type: ignore[type-arg]
    out = tmp_path / "replicas.json"
    argv = ["--rounds", "2", "--seconds", "0.5", "--warmup", "0.5", "--connections", "2", "--out", str(out), *args]
    assert replicas.main(argv) == 0
    report: dict = json.loads(out.read_text())  # type: ignore[type-arg]
    return report


def _check(report: dict, generator: str) -> None:  # type: ignore[type-arg]
    assert report["generator"] == generator and report["rounds"] == 2
    assert set(report["runs"]) == {"one replica", "two replicas"}
    for name, runs in report["runs"].items():
        assert len(runs) == 2
        for run in runs:
            assert run["calls_per_second"] > 0 and run["errors"] == 0
            assert len(run["replica_cores"]) == (1 if name == "one replica" else 2)
            # the CPU of each replica of the setup (sampled by the kernel: a short run may show none)
            assert all(cores >= 0 for cores in run["replica_cores"])
            assert run["server_cpu_us_per_call"] >= 0 and run["other_cores"] >= 0 and run["haproxy_cores"] >= 0
        rates = sorted(run["calls_per_second"] for run in runs)
        assert report["calls_per_second"][name] == {
            "median": round(sum(rates) / 2, 1),
            "min": rates[0],
            "max": rates[1],
        }
    medians = report["calls_per_second"]
    assert report["ratio"] == round(medians["two replicas"]["median"] / medians["one replica"]["median"], 2)


def test_the_replicas_benchmark_measures_one_and_two_replicas_with_python_clients(tmp_path: Path) -> None:
    _haproxy_or_skip()
    _check(_run(tmp_path, "--generator", "python", "--procs", "1"), "python")


@pytest.mark.skipif(
    shutil.which("wrk") is None, reason="wrk is not installed (the benchmark installs it; tests do not)"
)
def test_the_replicas_benchmark_measures_one_and_two_replicas_with_wrk(tmp_path: Path) -> None:
    _haproxy_or_skip()
    report = _run(tmp_path, "--generator", "wrk", "--no-install", "--seconds", "1")  # (wrk: whole seconds)
    _check(report, "wrk")
    for runs in report["runs"].values():
        assert all(run["p50_us"] <= run["p99_us"] for run in runs)
