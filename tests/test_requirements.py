"""The gate between the requirement manifests, the code and the tests.

One manifest per revision (``spec_notes/requirements.toml`` for 2025-11-25,
``spec_notes/<revision>/requirements.toml`` for the others; ids cited with their
revision, ``2026-07-28:basic/patterns/mrtr#4``, unprefixed for 2025-11-25). Per
revision: the manifest holds exactly the catalogue's ids; every implemented
requirement has a test citing it, and an ``[id]`` citation at the line of mcp_ref/
that enforces it (or a ``structural`` note saying why no single line does) -- for a
``same_as`` entry, its target's count; structural notes sit on implemented ids;
divergent and not-applicable entries say why; accepted mutation survivors say why;
the file is in the format tools/manifest.py writes. Across revisions: every id cited
in tests and in mcp_ref/ exists; every symbol resolves; every ``same_as`` names an
entry that is no ``same_as`` itself, has its status, and has the same text (else the
entry's note says why the code is the same anyway). The citation and marker syntax
is tools/manifest.py's (one parser for the gate and for ``mutate``).
"""

import ast
import functools
import importlib
from typing import Any

import pytest

from .conftest import ROOT, find_spec, manifest_tool, spec_missing

tool = manifest_tool()
STATUSES = set(tool.STATUSES)
REVISIONS = tool.REVISIONS
per_revision = pytest.mark.parametrize("revision", REVISIONS)


@functools.cache
def book() -> Any:
    return tool.Manifests(ROOT)


def manifest(revision: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = book().entries[revision]
    return entries


def own(revision: str) -> list[dict[str, Any]]:
    """The entries that stand for themselves (no ``same_as``)."""
    return [e for e in manifest(revision) if not e.get("same_as")]


@functools.cache
def cited_ids() -> dict[str, list[str]]:
    """id -> the tests citing it (file::test), found by reading the tests' source."""
    found: dict[str, list[str]] = tool.citing_tests(ROOT)
    return found


@functools.cache
def code_citations() -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = tool.citations_by_id(tool.citations(ROOT))
    return found


@functools.cache
def catalogue(revision: str) -> dict[str, dict[str, str]] | None:
    path = find_spec(revision, "requirements.tsv")
    return None if path is None else {row["id"]: row for row in tool.catalogue_rows(path)}


def test_every_revision_has_its_manifest() -> None:
    absent = [r for r in REVISIONS if not tool.manifest_path(r, ROOT).exists()]
    assert not absent, f"no manifest for {absent} (tools/manifest.py init --revision R)"


@per_revision
def test_statuses_are_valid(revision: str) -> None:
    bad = [e["id"] for e in manifest(revision) if e.get("status") not in STATUSES]
    assert not bad, f"invalid status on: {bad}"


@per_revision
def test_every_implemented_requirement_has_a_test(revision: str) -> None:
    cited = cited_ids()
    missing = [
        rid
        for rid in book().ids(revision)
        if book().by_id[rid]["status"] == "implemented" and rid not in cited and book().target(rid) not in cited
    ]
    assert not missing, f"implemented but no test cites them (nor their same_as): {missing}"


def test_every_cited_id_exists() -> None:
    unknown = {rid: files for rid, files in cited_ids().items() if rid not in book().by_id}
    assert not unknown, f"tests cite ids no manifest has: {unknown}"


@per_revision
def test_divergent_and_not_applicable_have_notes(revision: str) -> None:
    bare = [e["id"] for e in own(revision) if e["status"] in ("divergent", "not-applicable") and not e.get("note")]
    assert not bare, f"need a note saying why: {bare}"


@per_revision
def test_implemented_requirements_name_symbols(revision: str) -> None:
    bare = [e["id"] for e in own(revision) if e["status"] == "implemented" and not e.get("symbols")]
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
    for rid, e in book().by_id.items():
        for sym in e.get("symbols", []):
            try:
                _resolve(sym)
            except (ImportError, AttributeError) as exc:
                broken.append(f"{rid}: {sym} ({exc})")
    assert not broken, "symbols that do not resolve:\n" + "\n".join(broken)


@per_revision
def test_manifest_holds_exactly_the_catalogue(revision: str) -> None:
    rows = catalogue(revision)
    if rows is None:
        pytest.skip(spec_missing(revision, "requirements.tsv"))
    ours = [e["id"] for e in manifest(revision)]
    assert len(ours) == len(set(ours)), "duplicate ids in the manifest"
    assert set(ours) == set(rows), (
        f"missing: {sorted(set(rows) - set(ours))}; extra: {sorted(set(ours) - set(rows))} "
        f"(tools/manifest.py init --revision {revision} adds the missing ones)"
    )


@pytest.mark.parametrize("marker_src", ['pytest.mark.req("x")', 'mark.req("x")'])
def test_marker_scanner_finds_citations(marker_src: str) -> None:
    call = ast.parse(marker_src, mode="eval").body
    assert isinstance(call, ast.Call) and tool._is_req_marker(call.func)


@per_revision
def test_the_manifest_is_as_the_tool_writes_it(revision: str) -> None:
    path = tool.manifest_path(revision, ROOT)
    assert path.read_text() == tool.dump(manifest(revision), revision), f"edit {path} with tools/manifest.py"


@per_revision
def test_only_known_keys(revision: str) -> None:
    odd = {e["id"]: sorted(set(e) - set(tool.KEYS)) for e in manifest(revision) if set(e) - set(tool.KEYS)}
    assert not odd, f"keys tools/manifest.py does not write: {odd}"


@per_revision
def test_every_implemented_requirement_is_cited_at_its_enforcing_line(revision: str) -> None:
    """An ``[id]`` comment (or docstring) in mcp_ref/ where the rule is enforced, or a
    ``structural`` note saying why no single line does: ``tools/manifest.py mutate``
    breaks those lines and runs the tests citing the id. A ``same_as`` entry is
    enforced where its target is."""
    in_code = code_citations()
    bare = []
    for rid in book().ids(revision):
        target = book().target(rid)
        entry = book().by_id[target]
        if book().by_id[rid]["status"] != "implemented" or entry.get("structural"):
            continue
        if rid not in in_code and target not in in_code:
            bare.append(rid)
    assert not bare, (
        "implemented, with no [id] citation in mcp_ref/ at the enforcing line and no structural note "
        f"(tools/manifest.py set ID --structural '...'): {bare}"
    )


def test_every_id_cited_in_the_code_exists() -> None:
    unknown = {
        rid: [f"{c.path}:{c.line}" for c in cites] for rid, cites in code_citations().items() if rid not in book().by_id
    }
    assert not unknown, f"mcp_ref/ cites ids no manifest has: {unknown}"


@per_revision
def test_structural_notes_are_on_implemented_requirements(revision: str) -> None:
    odd = [e["id"] for e in manifest(revision) if e.get("structural") and e["status"] != "implemented"]
    assert not odd, f"a structural note explains how an implemented id is enforced; these are not: {odd}"


@per_revision
def test_accepted_survivors_name_a_mutant_and_say_why(revision: str) -> None:
    problems = [
        f"{e['id']}: {p}" for e in manifest(revision) for s in e.get("survivors", []) if (p := tool.survivor_problem(s))
    ]
    assert not problems, "\n".join(problems)


@per_revision
def test_same_as_names_an_entry_that_stands_for_itself_with_its_status(revision: str) -> None:
    problems = []
    for rid in book().ids(revision):
        e = book().by_id[rid]
        if not e.get("same_as"):
            if "reviewed" in e:
                problems.append(f"{rid}: reviewed is for same_as entries")
            continue
        problem = book().same_as_problem(rid, e["same_as"])
        if problem is None and e["status"] != book().by_id[book().target(rid)]["status"]:
            problem = f"status {e['status']}, but {e['same_as']} is {book().by_id[book().target(rid)]['status']}"
        if problem is None and (e.get("symbols") or e.get("structural")):
            problem = "symbols and structural notes belong to the target"
        if problem is not None:
            problems.append(f"{rid}: {problem}")
    assert not problems, "\n".join(problems)


@per_revision
def test_same_as_is_the_same_text_or_says_why(revision: str) -> None:
    """``init`` makes a ``same_as`` only for identical text (the catalogues' fingerprint);
    one made by hand for a reworded statement says in its note why the same code
    realises both."""
    aliases = [rid for rid in book().ids(revision) if book().by_id[rid].get("same_as")]
    needed = {tool.split_id(book().target(rid))[0] for rid in aliases} | {revision}
    absent = [r for r in sorted(needed) if catalogue(r) is None]
    if absent:
        pytest.skip(spec_missing(absent[0], "requirements.tsv"))
    unexplained = []
    for rid in aliases:
        (rev, local), (target_rev, target_local) = tool.split_id(rid), tool.split_id(book().target(rid))
        mine, theirs = catalogue(rev), catalogue(target_rev)
        assert mine is not None and theirs is not None
        same = mine[local]["fingerprint"] == theirs[target_local]["fingerprint"]
        if not same and not book().by_id[rid].get("note"):
            unexplained.append(rid)
    assert not unexplained, f"same_as a statement of other text, with no note saying why: {unexplained}"
