"""The gate between spec_notes/requirements.toml, the code and the tests.

Every implemented requirement has a test citing it, and an ``[id]`` citation at
the line of mcp_ref/ that enforces it (or a ``structural`` note saying why no
single line does); every id cited in tests and in mcp_ref/ exists; structural
notes sit on implemented ids; every symbol resolves; divergent and not-applicable
entries say why; accepted mutation survivors say why; the file is in the format
tools/manifest.py writes; and the manifest holds exactly the catalogue's ids.
The citation and marker syntax is tools/manifest.py's (one parser for the gate
and for ``mutate``).
"""

import ast
import csv
import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, manifest_tool, spec_path

MANIFEST = ROOT / "spec_notes" / "requirements.toml"
STATUSES = {"implemented", "divergent", "not-applicable", "planned"}


tool = manifest_tool()


def manifest() -> list[dict[str, Any]]:
    with MANIFEST.open("rb") as f:
        return list(tomllib.load(f)["requirement"])


def cited_ids() -> dict[str, list[str]]:
    """id -> the tests citing it (file::test), found by reading the tests' source."""
    return tool.citing_tests(ROOT)


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
    assert isinstance(call, ast.Call) and tool._is_req_marker(call.func)


def test_the_manifest_is_as_the_tool_writes_it() -> None:
    assert MANIFEST.read_text() == tool.dump(manifest()), "edit spec_notes/requirements.toml with tools/manifest.py"


def test_only_known_keys() -> None:
    odd = {e["id"]: sorted(set(e) - set(tool.KEYS)) for e in manifest() if set(e) - set(tool.KEYS)}
    assert not odd, f"keys tools/manifest.py does not write: {odd}"


def test_every_implemented_requirement_is_cited_at_its_enforcing_line() -> None:
    """An ``[id]`` comment (or docstring) in mcp_ref/ where the rule is enforced, or a
    ``structural`` note saying why no single line does: ``tools/manifest.py mutate``
    breaks those lines and runs the tests citing the id."""
    in_code = tool.citations_by_id(tool.citations(ROOT))
    bare = [e["id"] for e in manifest() if e["status"] == "implemented" and e["id"] not in in_code]
    bare = [rid for rid in bare if not next(e for e in manifest() if e["id"] == rid).get("structural")]
    assert not bare, (
        "implemented, with no [id] citation in mcp_ref/ at the enforcing line and no structural note "
        f"(tools/manifest.py set ID --structural '...'): {bare}"
    )


def test_every_id_cited_in_the_code_exists() -> None:
    known = {e["id"] for e in manifest()}
    unknown = {
        rid: [f"{c.path}:{c.line}" for c in cites]
        for rid, cites in tool.citations_by_id(tool.citations(ROOT)).items()
        if rid not in known
    }
    assert not unknown, f"mcp_ref/ cites ids the manifest does not have: {unknown}"


def test_structural_notes_are_on_implemented_requirements() -> None:
    odd = [e["id"] for e in manifest() if e.get("structural") and e["status"] != "implemented"]
    assert not odd, f"a structural note explains how an implemented id is enforced; these are not: {odd}"


def test_accepted_survivors_name_a_mutant_and_say_why() -> None:
    problems = [
        f"{e['id']}: {p}" for e in manifest() for s in e.get("survivors", []) if (p := tool.survivor_problem(s))
    ]
    assert not problems, "\n".join(problems)
