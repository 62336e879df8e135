"""Shared test plumbing: where the spec lives, and skipping when it is absent."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIR = ROOT.parent / "shared" / "spec"


def spec_path(*parts: str) -> Path:
    """A path under ../shared/spec; skips the calling test when the spec is absent."""
    path = SPEC_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"the MCP spec is not at {SPEC_DIR} (CI puts ../shared beside the checkout)")
    return path


# Property tests assert behaviour, not speed: no per-example deadline, so a busy
# CI machine cannot turn a slow example into a failure.
from hypothesis import settings  # noqa: E402

settings.register_profile("mcp_ref", deadline=None)
settings.load_profile("mcp_ref")
