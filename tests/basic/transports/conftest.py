"""Plumbing for the transport tests: the helper scripts and the ``subprocess`` marker."""

from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROOT = Path(__file__).resolve().parents[3]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "subprocess: runs real child processes (real I/O; every wait is short and bounded)"
    )


def script(name: str) -> str:
    """The path of a helper script under tests/basic/transports/scripts/."""
    path = SCRIPTS / f"{name}.py"
    assert path.is_file(), path
    return str(path)
