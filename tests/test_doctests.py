"""The examples in mcp_ref's docstrings (``>>>``) run, and print what they show."""

import doctest
import importlib
import io

import pytest

from .conftest import ROOT


def modules_with_examples() -> list[str]:
    found = []
    for path in sorted((ROOT / "mcp_ref").rglob("*.py")):
        if path.name != "__main__.py" and ">>> " in path.read_text():
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


@pytest.mark.parametrize("name", modules_with_examples())
def test_the_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    for test in tests:
        runner.run(test, out=out.write)
    assert tests, f"{name} mentions '>>> ' but no docstring of it holds an example"
    assert runner.failures == 0, out.getvalue()
