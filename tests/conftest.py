"""Shared test plumbing: where the spec lives, and skipping when it is absent;
tools/manifest.py loaded as a module."""

import importlib.util
import os
import signal
import sys
from collections.abc import Generator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the team's copy beside the checkout (CI has it); spec/ is what ``make spec`` fetches
SHARED_SPEC = ROOT.parent / "shared" / "spec"
FETCHED_SPEC = ROOT / "spec"
#: mcp_ref's own catalogues, made from the prose for this project (not upstream): ``make spec``
#: makes them with tools/extract_requirements.py
CATALOGUES = ("requirements.tsv", "methods.tsv")


def default_sigint() -> None:
    """``preexec_fn`` for a child a test stops with Ctrl-C (SIGINT).

    A shell runs a background job (``make test &``) with SIGINT ignored, and a child
    inherits that: Python then installs no KeyboardInterrupt handler, so the child
    would never see the test's Ctrl-C. The child gets the default disposition back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spec_dirs() -> tuple[Path, ...]:
    """Where the tests look for the spec, in order: ``$MCP_SPEC_DIR`` alone when it is set,
    else ../shared/spec, then spec/ (``make spec``)."""
    chosen = os.environ.get("MCP_SPEC_DIR")
    return (Path(chosen),) if chosen else (SHARED_SPEC, FETCHED_SPEC)


def find_spec(*parts: str) -> Path | None:
    """A file of the spec (``find_spec("2025-11-25", "schema.json")``), or None when absent."""
    for root in spec_dirs():
        path = root.joinpath(*parts)
        if path.exists():
            return path
    return None


def spec_missing(*parts: str) -> str:
    """Why the spec file ``parts`` cannot be had, and how to get it (the skip message)."""
    name = "/".join(parts)
    where = " or ".join(str(d) for d in spec_dirs())
    if parts[-1] in CATALOGUES:
        return (
            f"{name} is not in {where}: it is mcp_ref's own catalogue of the spec; run `make spec` to fetch "
            "the spec and make the catalogues with tools/extract_requirements.py into spec/, or set MCP_SPEC_DIR"
        )
    return (
        f"the MCP spec ({name}) is not in {where}: run `make spec` to fetch it from "
        "github.com/modelcontextprotocol (the spec and ext-tasks repositories) into spec/, or set MCP_SPEC_DIR"
    )


def spec_path(*parts: str) -> Path:
    """A file of the spec (see :func:`spec_dirs`); skips the calling test when it is absent."""
    path = find_spec(*parts)
    if path is None:
        pytest.skip(spec_missing(*parts))
    return path


def tool_module(script: str) -> ModuleType:
    """``tools/<script>.py`` (a script, not a package) as a module, loaded once."""
    name = f"mcp_ref_{script}_tool"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{script}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up by name
        spec.loader.exec_module(module)
    return sys.modules[name]


def manifest_tool() -> ModuleType:
    """tools/manifest.py as a module."""
    return tool_module("manifest")


# Property tests assert behaviour, not speed: no per-example deadline, so a busy
# CI machine cannot turn a slow example into a failure.
from hypothesis import settings  # noqa: E402

settings.register_profile("mcp_ref", deadline=None)
settings.load_profile("mcp_ref")


#: what a skip with no reason reports (``pytest.skip()``; also what pytest-trio re-raises when a
#: skip comes out of a trio test's nursery in an exception group: the reason is lost there)
REASONLESS_SKIP = "Skipped"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A skip must say why and how to enable the test: one that gives no reason fails."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple) and report.longrepr[2] == REASONLESS_SKIP:
        path, line, _ = report.longrepr
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} was skipped without a reason ({path}:{line}): say why and how to enable it. "
            "In a trio test, check in a plain (sync) fixture: a skip raised inside the test's nursery "
            "loses its reason on the way out."
        )
    return report
