"""Which layer may import what (DESIGN.md section 2), checked on the source."""

import ast
import importlib
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

PKG = ROOT / "mcp_ref"
STDLIB = set(sys.stdlib_module_names)


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def imports_of(path: Path) -> set[str]:
    """Absolute top-level names and resolved mcp_ref submodules a file imports."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = list(rel.parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join(base + ([node.module] if node.module else []))
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


TRIO_FREE = (
    "mcp_ref/basic/",
    "mcp_ref/server/",
    "mcp_ref/client/",
    "mcp_ref/connection.py",
    "mcp_ref/events.py",
    "mcp_ref/errors.py",
    "mcp_ref/schema/",
)
TRIO_ALLOWED = (
    "mcp_ref/session/",
    "mcp_ref/basic/transports/",
    "mcp_ref/testing/",
    "mcp_ref/examples/",
    "mcp_ref/cli.py",
    "mcp_ref/__init__.py",
)


def test_chapter_rules_and_engine_never_import_trio_or_h11() -> None:
    bad = []
    for path in modules():
        r = rel(path)
        if r.startswith(TRIO_FREE) and not r.startswith("mcp_ref/basic/transports/"):
            bad += [f"{r} imports {n}" for n in imports_of(path) if top(n) in ("trio", "h11")]
    assert not bad, bad


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


def test_public_names_resolve() -> None:
    mod = importlib.import_module("mcp_ref")
    missing = [n for n in getattr(mod, "__all__", []) if not hasattr(mod, n)]
    assert not missing, missing
    assert mod.__all__, "mcp_ref.__all__ is empty"


@pytest.mark.parametrize("path", modules(), ids=rel)
def test_every_module_imports(path: Path) -> None:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    importlib.import_module(name)
