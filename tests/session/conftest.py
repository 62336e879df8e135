"""Fixtures of the session tests: a real PostgreSQL for the task stores."""

import os
from collections.abc import Iterator

import pytest

from mcp_ref.testing.postgres import PostgresNotInstalled, PostgresServer, start_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the test session (each test takes tables of its own).

    Without PostgreSQL installed the tests that need it are skipped, saying so, unless
    ``MCP_REF_REQUIRE_POSTGRES`` is set (``.ci/run`` sets it, after installing it): then they fail.
    """
    try:
        server = start_postgres()
    except PostgresNotInstalled as e:
        if os.environ.get("MCP_REF_REQUIRE_POSTGRES"):
            pytest.fail(str(e))
        pytest.skip(f"{e}; .ci/run installs it")
    try:
        yield server
    finally:
        server.close()
