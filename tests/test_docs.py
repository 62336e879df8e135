"""The documentation: the Sphinx build has no warnings, the reference covers every
public name, and the changelog's news fragments are well named and render."""

import ast
import enum
import functools
import inspect
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import attrs
from sphinx.pycode import ModuleAnalyzer

import mcp_ref

from .conftest import ROOT

DOCS = ROOT / "docs"
FRAGMENTS = ROOT / "newsfragments"


def test_the_docs_build_without_warnings(tmp_path: Path) -> None:
    # what `make docs` runs; -W turns every warning (a broken docstring, a missing page) into a failure
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html", str(DOCS), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    reference = (tmp_path / "reference.html").read_text()
    assert 'id="mcp_ref.Server.tool"' in reference  # autodoc rendered the members, not just the names
    # every public method and property has its entry (autodoc skips a member without a docstring:
    # the reference once left out 21 of ClientSession's 27, list_tools and read_resource among them)
    absent = [f"{cls}.{name}" for cls, name, _ in public_members() if f'id="mcp_ref.{cls}.{name}"' not in reference]
    assert absent == []


def public_classes() -> list[tuple[str, type]]:
    return [
        (name, obj)
        for name in mcp_ref.__all__
        if inspect.isclass(obj := getattr(mcp_ref, name)) and not issubclass(obj, enum.Enum)
    ]


def _routine(value: object) -> Any:
    """The function behind a method, property or cached property (None for data)."""
    if isinstance(value, staticmethod | classmethod):
        return value.__func__
    if isinstance(value, property):
        return value.fget
    if isinstance(value, functools.cached_property):
        return value.func
    return value if inspect.isfunction(value) else None


def public_members() -> list[tuple[str, str, Any]]:
    """(class, member, function) of each public method and property of the exported
    classes, including what they inherit from mcp_ref's other classes."""
    found = []
    for cls_name, cls in public_classes():
        seen = set()
        for klass in cls.__mro__:
            if not klass.__module__.startswith("mcp_ref."):
                continue
            for name, value in vars(klass).items():
                fn = _routine(value)
                if fn is not None and not name.startswith("_") and name not in seen:
                    seen.add(name)
                    found.append((cls_name, name, fn))
    return found


def public_attributes() -> list[tuple[str, str, bool]]:
    """(class, attribute, documented) of each public attribute of the exported classes: the
    fields of an attrs class and what ``__init__`` sets on ``self``. Documented is a ``#:``
    comment (autodoc shows it) or the name in double backquotes in the class docstring."""
    found = []
    for cls_name, cls in public_classes():
        prose = " ".join(inspect.getdoc(k) or "" for k in cls.__mro__ if k.__module__.startswith("mcp_ref."))
        names: dict[str, type] = {}
        for klass in reversed(cls.__mro__):
            if not klass.__module__.startswith("mcp_ref."):
                continue
            names |= {name: klass for name in getattr(klass, "__annotations__", {}) if attrs.has(klass)}
            init = vars(klass).get("__init__")
            if init is not None and inspect.isfunction(init):
                for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(init)))):
                    targets = node.targets if isinstance(node, ast.Assign) else []
                    targets += [node.target] if isinstance(node, ast.AnnAssign) else []
                    for t in targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            names.setdefault(t.attr, klass)
        for name, klass in names.items():
            if name.startswith("_") or isinstance(getattr(cls, name, None), property):
                continue
            comments = ModuleAnalyzer.for_module(klass.__module__).find_attr_docs()
            found.append((cls_name, name, (klass.__qualname__, name) in comments or f"``{name}``" in prose))
    return found


def test_every_public_member_has_a_docstring() -> None:
    undocumented = [f"{cls}.{name}" for cls, name, fn in public_members() if not (fn.__doc__ or "").strip()]
    assert undocumented == []
    assert len(public_members()) > 150  # the walk sees the members (ClientSession alone has 30)


def test_every_public_attribute_is_documented() -> None:
    attributes = public_attributes()
    assert [f"{cls}.{name}" for cls, name, documented in attributes if not documented] == []
    assert ("ClientSession", "session", True) in attributes and ("HttpConfig", "max_body", True) in attributes


def test_every_public_function_has_a_docstring() -> None:
    functions = [name for name in mcp_ref.__all__ if inspect.isroutine(getattr(mcp_ref, name))]
    assert "connect" in functions or "open_session" in functions
    assert [name for name in functions if not (getattr(mcp_ref, name).__doc__ or "").strip()] == []


def test_every_public_name_is_in_the_reference() -> None:
    documented = set(re.findall(r"^\.\. auto\w+:: (\w+)", (DOCS / "reference.rst").read_text(), re.MULTILINE))
    assert documented == set(mcp_ref.__all__)


def fragment_types() -> list[str]:
    config = tomllib.loads((ROOT / "towncrier.toml").read_text())["tool"]["towncrier"]
    assert config["directory"] == "newsfragments" and config["filename"] == "CHANGELOG.rst"
    return [t["directory"] for t in config["type"]]


def test_news_fragments_are_named_by_issue_and_type() -> None:
    name = re.compile(rf"(\d+|\+[\w-]+)\.({'|'.join(fragment_types())})(\.\d+)?\.rst")
    fragments = [p.name for p in FRAGMENTS.iterdir() if p.name != "README.rst"]
    assert [f for f in fragments if not name.fullmatch(f)] == []


def test_the_changelog_draft_renders_every_fragment(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "towncrier", "build", "--draft", "--version", "9.9.9"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "mcp_ref 9.9.9" in done.stdout
    for path in FRAGMENTS.glob("*.rst"):
        if path.name != "README.rst" and ".misc" not in path.name:
            first_words = " ".join(path.read_text().split()[:4])
            assert first_words in " ".join(done.stdout.split()), path.name
