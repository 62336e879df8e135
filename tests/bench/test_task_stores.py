"""Smoke test of the task store benchmark (bench/task_stores.py): it runs and reports what it says. Nothing is timed."""

import json
from pathlib import Path

from bench import task_stores


def test_the_task_store_benchmark_reports_each_measurement(tmp_path: Path, capsys: object) -> None:
    out = tmp_path / "task_stores.json"
    assert task_stores.main(["--stores", "memory,sqlite", "--tasks", "40", "--clients", "4", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["meta"]["tasks"] == 40
    for kind in ("memory", "sqlite"):
        result = report["results"][kind]
        assert set(result) == {"store", "concurrent", "mcp"}
        assert set(result["store"]) == {"create", "get", "create_get_per_s"}
        assert set(result["mcp"]) == {"create", "tasks/get"}
        for call in (result["store"]["create"], result["mcp"]["tasks/get"], result["concurrent"]):
            assert 0 < call["p50_us"] <= call["p99_us"] and call["per_s"] > 0
