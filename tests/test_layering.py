"""Which layer may import what (DESIGN.md section 2), checked on the source."""

import ast
import csv
import importlib
import re
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, spec_path

PKG = ROOT / "mcp_ref"
STDLIB = set(sys.stdlib_module_names)


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def imports_of(path: Path, root: Path = ROOT) -> set[str]:
    """Absolute top-level names and resolved mcp_ref submodules a file imports."""
    rel = path.relative_to(root).with_suffix("")
    package = list(rel.parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:
                    # ``from .. import schema``: the subpackage (or submodule) itself where it is one
                    where = root.joinpath(*base)
                    subs = [
                        a.name for a in node.names if (where / a.name).is_dir() or (where / f"{a.name}.py").exists()
                    ]
                    found.update(f"{mod}.{name}" for name in subs)
                    if len(subs) == len(node.names):
                        continue
                found.add(mod)
            elif node.module:
                found.add(node.module)
    return found


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def top(name: str) -> str:
    return name.split(".")[0]


def test_schema_imports_only_attrs_cattrs_and_errors() -> None:
    bad = []
    for path in modules():
        if not rel(path).startswith("mcp_ref/schema/"):
            continue
        for name in imports_of(path):
            ok = (
                top(name) in STDLIB
                or top(name) in ("attrs", "cattrs")
                or name.startswith(("mcp_ref.schema", "mcp_ref.errors"))
            )
            if not ok:
                bad.append(f"{rel(path)} imports {name}")
    assert not bad, bad


#: the cross-checker judges sans-IO, like the engine it is built on; its drivers
#: (the battery, the fixture, the tap, the connections they open) run on trio
CROSSCHECK_JUDGING = tuple(
    f"mcp_ref/crosscheck/{m}.py"
    for m in (
        "__init__",
        "rules",
        "report",
        "observer",
        "traffic",
        "judge",
        "config",
        "http_rules",
        "exercise",
        "sections",
        "html",
        # the value rules of every revision (the observer and the 2026-07-28 judges apply them)
        "values",
        # the rules of 2026-07-28 (the battery, the fixture, the tap and the judge hold traffic to them)
        "modern_judge",
        "explain",
        # one observer per HTTP session (the tap and the judge route traffic through it)
        "sessions",
    )
)
CROSSCHECK_DRIVERS = tuple(
    f"mcp_ref/crosscheck/{m}.py"
    for m in (
        "cli",
        "battery",
        "channel",
        "targets",
        "fixture",
        "tap",
        "http_tap",
        "http_probe",
        # the 2026-07-28 battery and fixture (their wires run on trio; the rules are modern_judge's)
        # and the fixture's HTTP relay
        "modern",
        "modern_fixture",
        "client_http",
    )
)
TRIO_FREE = (
    "mcp_ref/basic/",
    "mcp_ref/server/",
    "mcp_ref/client/",
    "mcp_ref/connection.py",
    "mcp_ref/exchange.py",
    "mcp_ref/events.py",
    "mcp_ref/errors.py",
    "mcp_ref/schema/",
    *CROSSCHECK_JUDGING,
)
TRIO_ALLOWED = (
    "mcp_ref/session/",
    "mcp_ref/ext/",
    "mcp_ref/basic/transports/",
    "mcp_ref/testing/",
    "mcp_ref/examples/",
    "mcp_ref/cli.py",
    "mcp_ref/__init__.py",
    *CROSSCHECK_DRIVERS,
)


def test_chapter_rules_and_engine_never_import_trio_or_h11() -> None:
    bad = []
    for path in modules():
        r = rel(path)
        if r.startswith(TRIO_FREE) and not r.startswith("mcp_ref/basic/transports/"):
            bad += [f"{r} imports {n}" for n in imports_of(path) if top(n) in ("trio", "h11")]
    assert not bad, bad


def test_every_crosscheck_module_is_judging_or_driving() -> None:
    listed = set(CROSSCHECK_JUDGING) | set(CROSSCHECK_DRIVERS)
    unlisted = [rel(p) for p in modules() if rel(p).startswith("mcp_ref/crosscheck/") and rel(p) not in listed]
    assert not unlisted, unlisted


def test_trio_only_where_the_runtime_lives() -> None:
    bad = []
    for path in modules():
        r = rel(path)
        if not r.startswith(TRIO_ALLOWED):
            bad += [f"{r} imports {n}" for n in imports_of(path) if top(n) == "trio"]
    assert not bad, bad


def test_the_engine_imports_no_session() -> None:
    for path in modules():
        r = rel(path)
        if r.startswith(TRIO_FREE):
            assert not [n for n in imports_of(path) if n.startswith("mcp_ref.session")], r


#: what each layer may import from mcp_ref, by path prefix (the longest prefix applies);
#: spec_notes/README.md ("Layers") says why
LAYERS = {
    "mcp_ref/errors.py": ("mcp_ref.errors", "mcp_ref.schema"),
    "mcp_ref/schema/": ("mcp_ref.errors", "mcp_ref.schema"),
    # the base protocol's rules never depend on a feature (server/, client/) or the engine
    "mcp_ref/basic/": ("mcp_ref.errors", "mcp_ref.schema", "mcp_ref.basic"),
    # the engine is role-neutral: the base protocol and its events, no feature chapter
    "mcp_ref/events.py": ("mcp_ref.errors", "mcp_ref.schema"),
    "mcp_ref/connection.py": ("mcp_ref.errors", "mcp_ref.schema", "mcp_ref.basic", "mcp_ref.events"),
    # the modern engine (one request at a time, 2026-07-28): the same layer as the session engine
    "mcp_ref/exchange.py": ("mcp_ref.errors", "mcp_ref.schema", "mcp_ref.basic", "mcp_ref.events"),
    # feature chapters build on the base protocol only; the two sides do not import each other
    "mcp_ref/server/": ("mcp_ref.errors", "mcp_ref.schema", "mcp_ref.basic", "mcp_ref.server"),
    "mcp_ref/client/": ("mcp_ref.errors", "mcp_ref.schema", "mcp_ref.basic", "mcp_ref.client"),
    # the judge watches both roles: any sans-IO layer, never the runtime
    **{
        path: (
            "mcp_ref.errors",
            "mcp_ref.schema",
            "mcp_ref.basic",
            "mcp_ref.events",
            "mcp_ref.connection",
            "mcp_ref.server",
            "mcp_ref.client",
            "mcp_ref.crosscheck",
        )
        for path in CROSSCHECK_JUDGING
    },
}


def layer_violations(paths: list[Path], root: Path = ROOT) -> list[str]:
    bad = []
    for path in paths:
        r = str(path.relative_to(root))
        prefixes = [p for p in LAYERS if r.startswith(p)]
        if not prefixes:
            continue  # session/, testing/, examples/, cli: they compose everything
        allowed = tuple(a + "." for a in LAYERS[max(prefixes, key=len)])
        for name in sorted(imports_of(path, root)):
            if top(name) == "mcp_ref" and not (name + ".").startswith(allowed):
                bad.append(f"{r} imports {name}")
    return bad


def test_each_layer_imports_only_the_layers_below_it() -> None:
    assert layer_violations(modules()) == []


def test_the_layer_rule_catches_basic_or_the_engine_importing_a_feature_chapter(tmp_path: Path) -> None:
    # the two inversions the rule was written against: a basic/ chapter importing a
    # server/ module, and the engine importing a client/ one
    probes = {
        "mcp_ref/basic/utilities/tasks.py": "from ...server.utilities.pagination import make_cursor\n",
        "mcp_ref/connection.py": "from .client.elicitation import check_url\n",
        "mcp_ref/client/roots.py": "from ..server import tools\n",
        "mcp_ref/server/tools.py": "from ..basic.utilities import tasks\nfrom ..errors import ErrorCode\n",
    }
    for name, text in probes.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert layer_violations(sorted(tmp_path.rglob("*.py")), tmp_path) == [
        "mcp_ref/basic/utilities/tasks.py imports mcp_ref.server.utilities.pagination",
        "mcp_ref/client/roots.py imports mcp_ref.server",
        "mcp_ref/connection.py imports mcp_ref.client.elicitation",
    ]


def import_graph() -> dict[str, set[str]]:
    """mcp_ref module -> the mcp_ref modules it imports anywhere in its source: at
    top level, inside functions and under TYPE_CHECKING alike (``from pkg import
    name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``)."""
    names = {module_name(p): p for p in modules()}

    def resolve(name: str) -> str | None:
        while name and name not in names:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(package[: len(package) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]
            edges.update(t for t in (resolve(t) for t in targets if top(t) == "mcp_ref") if t is not None)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_among_mcp_ref_modules() -> None:
    # an import inside a function or under TYPE_CHECKING still ties the two modules
    # together (each needs the other to be read or type-checked): a cycle all the same
    assert cycles(import_graph()) == []


def test_the_cycle_check_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    real = import_graph()
    # session/core imports the requestor side of tasks; session/tasks imports core: one direction each
    assert "mcp_ref.session.task_requestor" in real["mcp_ref.session.core"]
    assert "mcp_ref.session.core" in real["mcp_ref.session.tasks"]
    assert "mcp_ref.session.tasks" not in real["mcp_ref.session.core"]


def test_public_names_resolve() -> None:
    mod = importlib.import_module("mcp_ref")
    missing = [n for n in getattr(mod, "__all__", []) if not hasattr(mod, n)]
    assert not missing, missing
    assert mod.__all__, "mcp_ref.__all__ is empty"


@pytest.mark.parametrize("path", modules(), ids=rel)
def test_every_module_imports(path: Path) -> None:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    importlib.import_module(name)


# -- the chapter map of spec_notes/README.md against the tree --------------------------------


def chapter_map() -> list[list[str]]:
    """The rows of the chapter map table: [page, rules, runtime, note] cells."""
    text = (ROOT / "spec_notes" / "README.md").read_text()
    section = text.split("## Chapter map", 1)[1].split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| `")
    ]
    assert rows and all(len(r) == 4 for r in rows), "the chapter map is a table of four columns"
    return rows


def map_paths(cell: str) -> list[str]:
    """The repository paths a cell names: ``mcp_ref/...`` ones, and bare ``x.py`` names
    after a ``mcp_ref/dir/`` one, which are in that directory."""
    found: list[str] = []
    base = ""
    for token in re.findall(r"`([^`]+)`", cell):
        if token.startswith("mcp_ref/"):
            found.append(token)
            base = token if token.endswith("/") else base
        elif token.endswith(".py") and "/" not in token and base:
            found.append(base + token)
    return found


def test_every_path_in_the_chapter_map_exists() -> None:
    missing = []
    for page, rules, runtime, note in chapter_map():
        missing += [f"{page}: {p}" for p in map_paths(rules) + map_paths(runtime) if not (ROOT / p).exists()]
        for name in re.findall(r"`([^`]+\.md)`", note):
            if not (ROOT / "spec_notes" / name).exists():
                missing.append(f"{page}: spec_notes/{name}")
    assert not missing, missing


#: where the chapters' sans-IO rules live: each module there is in the map
CHAPTER_DIRS = (
    "mcp_ref/basic",
    "mcp_ref/basic/utilities",
    "mcp_ref/basic/authorization",
    "mcp_ref/server",
    "mcp_ref/server/utilities",
    "mcp_ref/client",
)


def test_every_chapter_module_is_in_the_chapter_map() -> None:
    text = (ROOT / "spec_notes" / "README.md").read_text()
    named = {p for row in chapter_map() for cell in row[1:3] for p in map_paths(cell)}
    named |= set(re.findall(r"`(mcp_ref/[^`]+)`", text.split("## Chapter map", 1)[1].split("\n## ", 1)[0]))
    absent = [
        rel(path)
        for d in CHAPTER_DIRS
        for path in sorted((ROOT / d).glob("*.py"))
        if path.name != "__init__.py" and rel(path) not in named
    ]
    assert not absent, f"chapter modules the map in spec_notes/README.md does not name: {absent}"


def test_every_page_of_the_catalogue_has_a_row() -> None:
    with spec_path("2025-11-25", "requirements.tsv").open(newline="") as f:
        pages = {row["file"] for row in csv.DictReader(f, delimiter="\t")}
    mapped = {page for row in chapter_map() for page in re.findall(r"`([^`]+\.mdx)`", row[0])}
    assert pages - mapped == set(), f"pages without a row in the chapter map: {sorted(pages - mapped)}"


#: the 2026-07-28 pages of the chapters the modern engine realises: each has its row in the map
MODERN_PAGES = (
    "basic/versioning.mdx",
    "basic/patterns/cancellation.mdx",
    "basic/patterns/progress.mdx",
    "basic/patterns/mrtr.mdx",
    "basic/patterns/subscriptions.mdx",
    "basic/transports/streamable-http.mdx",
    "server/discover.mdx",
    "server/utilities/caching.mdx",
)


def test_the_modern_pages_have_their_row_and_module_where_the_rule_says() -> None:
    rows = {re.findall(r"`([^`]+\.mdx)`", row[0])[0]: row for row in chapter_map() if "(2026-07-28)" in row[0]}
    assert set(MODERN_PAGES) <= set(rows), sorted(set(MODERN_PAGES) - set(rows))
    for page in MODERN_PAGES:
        if page.startswith("basic/patterns/") or page in ("basic/versioning.mdx", "server/discover.mdx"):
            # the newest page's path is the module's path
            module = "mcp_ref/" + page.replace(".mdx", ".py")
            assert module in map_paths(rows[page][1]) and (ROOT / module).exists(), page
