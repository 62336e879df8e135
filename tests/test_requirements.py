"""The gate between spec_notes/requirements.toml and the tests.

Every implemented requirement has a test citing it; every cited id exists;
every symbol resolves; divergent and not-applicable entries say why; and the
manifest holds exactly the catalogue's ids.
"""

import ast
import csv
import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, spec_path

MANIFEST = ROOT / "spec_notes" / "requirements.toml"
STATUSES = {"implemented", "divergent", "not-applicable", "planned"}


def manifest() -> list[dict[str, Any]]:
    with MANIFEST.open("rb") as f:
        return list(tomllib.load(f)["requirement"])


def _is_req_marker(func: ast.expr) -> bool:
    # pytest.mark.req(...) or mark.req(...)
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "req"
        and (
            (isinstance(func.value, ast.Attribute) and func.value.attr == "mark")
            or (isinstance(func.value, ast.Name) and func.value.id == "mark")
        )
    )


def cited_ids() -> dict[str, list[str]]:
    """id -> test files citing it, found by reading the tests' source."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_req_marker(node.func):
                for arg in node.args:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found.setdefault(arg.value, []).append(str(path.relative_to(ROOT)))
    return found


def test_statuses_are_valid() -> None:
    bad = [e["id"] for e in manifest() if e.get("status") not in STATUSES]
    assert not bad, f"invalid status on: {bad}"


def test_every_implemented_requirement_has_a_test() -> None:
    cited = cited_ids()
    missing = [e["id"] for e in manifest() if e["status"] == "implemented" and e["id"] not in cited]
    assert not missing, f"implemented but no test cites them: {missing}"


def test_every_cited_id_exists() -> None:
    known = {e["id"] for e in manifest()}
    unknown = {rid: files for rid, files in cited_ids().items() if rid not in known}
    assert not unknown, f"tests cite ids the manifest does not have: {unknown}"


def test_divergent_and_not_applicable_have_notes() -> None:
    bare = [e["id"] for e in manifest() if e["status"] in ("divergent", "not-applicable") and not e.get("note")]
    assert not bare, f"need a note saying why: {bare}"


def test_implemented_requirements_name_symbols() -> None:
    bare = [e["id"] for e in manifest() if e["status"] == "implemented" and not e.get("symbols")]
    assert not bare, f"implemented without symbols: {bare}"


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_symbols_resolve() -> None:
    broken = []
    for e in manifest():
        for sym in e.get("symbols", []):
            try:
                _resolve(sym)
            except (ImportError, AttributeError) as exc:
                broken.append(f"{e['id']}: {sym} ({exc})")
    assert not broken, "symbols that do not resolve:\n" + "\n".join(broken)


def test_manifest_holds_exactly_the_catalogue() -> None:
    path: Path = spec_path("2025-11-25", "requirements.tsv")
    with path.open(newline="") as f:
        catalogue = [row["id"] for row in csv.DictReader(f, delimiter="\t")]
    ours = [e["id"] for e in manifest()]
    assert len(ours) == len(set(ours)), "duplicate ids in the manifest"
    assert set(ours) == set(catalogue), (
        f"missing: {sorted(set(catalogue) - set(ours))}; extra: {sorted(set(ours) - set(catalogue))}"
    )


@pytest.mark.parametrize("marker_src", ['pytest.mark.req("x")', 'mark.req("x")'])
def test_marker_scanner_finds_citations(marker_src: str) -> None:
    call = ast.parse(marker_src, mode="eval").body
    assert isinstance(call, ast.Call) and _is_req_marker(call.func)
