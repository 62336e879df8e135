"""The examples (and the newcomer's app) import what an application would: names from ``mcp_ref``, the data
model from ``mcp_ref.schema``, test helpers from ``mcp_ref.testing``; nothing from
the modules behind them (their layout may change), nor by ``importlib``."""

import ast
import re
import textwrap
from pathlib import Path

import pytest

import mcp_ref
import mcp_ref.ext.tasks
import mcp_ref.schema

from ..conftest import ROOT

#: the shipped examples, the guides' examples, and the newcomer's app with its tests
EXAMPLES = (
    sorted((ROOT / "mcp_ref" / "examples").glob("*.py"))
    + sorted((ROOT / "docs" / "examples").glob("*.py"))
    + sorted((ROOT / "tests" / "examples" / "newcomer").glob("*.py"))
)

#: the documents whose Python snippets a user copies
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.rst"))]

#: where an application's imports come from; everything else is the library's inside
PUBLIC = {"mcp_ref": mcp_ref, "mcp_ref.schema": mcp_ref.schema, "mcp_ref.ext.tasks": mcp_ref.ext.tasks}


def imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every import of mcp_ref in the file, at any depth
    (``import mcp_ref.x`` gives ("mcp_ref.x", "*"))."""
    return imports_in(path.read_text())


def snippets(document: Path) -> list[str]:
    """The Python code blocks of a Markdown or reStructuredText document."""
    text = document.read_text()
    if document.suffix == ".md":
        return re.findall(r"^```(?:python|py)\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    blocks = re.findall(r"^( *)\.\. code-block:: python\n\n((?:\1 +.*\n|\n)+)", text, re.MULTILINE)
    blocks += re.findall(r"^( *).*::\n\n((?:\1 +.*\n|\n)+)", text, re.MULTILINE)
    return [textwrap.dedent(body) for _, body in blocks if "import" in body]


def imports_in(code: str) -> list[tuple[str, str]]:
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mcp_ref":
            found.extend((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "*") for alias in node.names if alias.name.split(".")[0] == "mcp_ref")
        elif isinstance(node, ast.Attribute) and node.attr == "import_module":
            found.append(("importlib", "import_module"))
    return found


def misplaced(module: str, name: str) -> str | None:
    """Why ``from module import name`` is not what an application would write, or None."""
    if module == "importlib":
        return "importlib.import_module: import the name from mcp_ref"
    if module in PUBLIC:
        return None if name in PUBLIC[module].__all__ else f"{module}.{name}: not in {module}.__all__"
    if module.startswith(("mcp_ref.testing", "mcp_ref.examples")) and not any(
        p.startswith("_") for p in module.split(".")
    ):
        return None  # the test helpers, and the shipped examples (the demo authorization server)
    home = next((public for public, m in PUBLIC.items() if name in m.__all__), None)
    return f"{module}.{name}: " + (f"import it from {home}" if home else "not exported by mcp_ref")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_use_public_names_only(path: Path) -> None:
    wrong = [why for module, name in imports(path) if (why := misplaced(module, name))]
    assert wrong == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_the_guides_import_public_names_only(document: Path) -> None:
    # the README's OAuth example imported print_url from mcp_ref.basic.transports.oauth_callback
    wrong = [
        why for code in snippets(document) for module, name in imports_in(code) if (why := misplaced(module, name))
    ]
    assert wrong == []


def test_the_guides_have_snippets_to_check() -> None:
    assert len(snippets(ROOT / "README.md")) >= 5


def test_the_check_tells_the_inside_from_the_outside() -> None:
    assert misplaced("mcp_ref", "Server") is None
    assert misplaced("mcp_ref.schema", "Tool") is None
    assert misplaced("mcp_ref.testing.oauth", "HeadlessBrowser") is None
    assert misplaced("mcp_ref.session", "Server") == "mcp_ref.session.Server: import it from mcp_ref"
    assert misplaced("mcp_ref.schema.tools", "Tool") == "mcp_ref.schema.tools.Tool: import it from mcp_ref.schema"
    assert misplaced("mcp_ref.schema._converter", "converter") == (
        "mcp_ref.schema._converter.converter: not exported by mcp_ref"
    )
    assert misplaced("mcp_ref", "Nope") == "mcp_ref.Nope: not in mcp_ref.__all__"
