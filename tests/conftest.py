"""Shared test plumbing: where the spec lives, and skipping when it is absent;
tools/manifest.py loaded as a module."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT.parent / "shared" / "spec"


def spec_path(*parts: str) -> Path:
    """A path under ../shared/spec; skips the calling test when the spec is absent."""
    path = SPEC_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"the MCP spec is not at {SPEC_DIR} (CI puts ../shared beside the checkout)")
    return path


def manifest_tool() -> ModuleType:
    """tools/manifest.py (a script, not a package) as a module, loaded once."""
    name = "mcp_ref_manifest_tool"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "manifest.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up by name
        spec.loader.exec_module(module)
    return sys.modules[name]


# Property tests assert behaviour, not speed: no per-example deadline, so a busy
# CI machine cannot turn a slow example into a failure.
from hypothesis import settings  # noqa: E402

settings.register_profile("mcp_ref", deadline=None)
settings.load_profile("mcp_ref")
