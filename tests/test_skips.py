"""Every skip says why (tests/conftest.py): one with no reason fails, the way pytest-trio
reports a skip raised inside a trio test's nursery included."""

import pytest

from .conftest import ROOT

pytest_plugins = ["pytester"]

TESTS = """
import pytest
import trio


def test_with_a_reason() -> None:
    pytest.skip("no Node 22: make conformance caches one")


def test_without_one() -> None:
    pytest.skip()


async def test_inside_a_nursery() -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep_forever)
        pytest.skip("lost on the way out of the nursery")
"""


def test_a_skip_without_a_reason_fails(pytester: pytest.Pytester) -> None:
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\ntrio_mode = true\n")
    pytester.makepyfile(test_three=TESTS)
    result = pytester.runpytest_subprocess("-rs")
    result.assert_outcomes(skipped=1, failed=2)
    result.stdout.fnmatch_lines(["*test_three.py:*: no Node 22: make conformance caches one"])
    result.stdout.fnmatch_lines(["*test_without_one was skipped without a reason*"])
    result.stdout.fnmatch_lines(["*test_inside_a_nursery was skipped without a reason*"])
