#!/usr/bin/env python3
"""The requirement manifest: spec_notes/requirements.toml.

One ``[[requirement]]`` table per id of ../shared/spec/2025-11-25/requirements.tsv,
with our status, the symbols that realise it and a note in our own words.

    tools/manifest.py init                       create / refresh from the catalogue
    tools/manifest.py set ID [ID...] [--status S] [--symbols a,b] [--note "..."]
                          [--structural "why no single line"] [--survivor "KEY -- why"] [--clear-survivors]
    tools/manifest.py coverage                   per-chapter table; last line is the total
    tools/manifest.py show ID                    statement, our entry, enforcing lines, citing tests
                                                 (a short id such as cancellation#8 gets the full one suggested)
    tools/manifest.py list [--status S] [--chapter C]
    tools/manifest.py mutate [ID...] [--chapter C] [--status S] [--sample N --seed S] [--dry-run]
                             [--jobs J] [--timeout T] [--no-baseline] [--json]

Two optional keys of an entry are about citations and mutation:

- ``structural``: why no single line enforces an implemented id (the attrs model,
  a type, the shape of the whole module...). Such an id needs no ``[id]`` citation
  in mcp_ref/ and ``mutate`` reports it as structural instead of mutating it.
- ``survivors``: mutants of the id's enforcing lines that are known to survive,
  each ``"KEY -- why"`` with the KEY ``mutate`` prints. Only these may survive.

Citations in code: a comment or docstring holding ``[chapter#N]``, with grouped
forms ``[chapter#N, #M]``, ``[chapter#N-#M]`` and ``[a#N, b#M]``. A comment
annotates the statement on its line, or else the next statement; a docstring
annotates its function. ``mutate`` breaks that statement in a scratch copy of the
repository (negate an if/while test or a boolean value, return early from a
function, skip a block, delete a statement) and runs only the tests citing the id
(``@pytest.mark.req``); a mutant that no test notices survives.

Standard library only; ``mutate`` runs the tests, so it needs a python with pytest and
mcp_ref's dependencies: the checkout's .venv (``make test`` creates it; ``make mutate
ID=...`` runs one id with it). Run with another python, ``mutate`` re-runs itself under
.venv/bin/python when there is one, and otherwise says so in one line. Writes are
atomic and serialised with a lock file. The spec is looked up in ../shared beside the
checkout, or in $MCP_REF_SHARED.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import csv
import dataclasses
import difflib
import fcntl
import hashlib
import io
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import tokenize
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "spec_notes" / "requirements.toml"
SHARED = Path(os.environ.get("MCP_REF_SHARED") or ROOT.parent / "shared")
CATALOGUE = SHARED / "spec" / "2025-11-25" / "requirements.tsv"
STATUSES = ("implemented", "divergent", "not-applicable", "planned")
KEYS = ("id", "status", "symbols", "note", "structural", "survivors")
PACKAGE = "mcp_ref"


def chapter_of(req_id: str) -> str:
    return req_id.split("#", 1)[0]


def load(path: Path | None = None) -> list[dict[str, Any]]:
    path = path or MANIFEST
    if not path.exists():
        return []
    with path.open("rb") as f:
        return list(tomllib.load(f).get("requirement", []))


def catalogue_rows(path: Path = CATALOGUE) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def catalogue_ids(path: Path = CATALOGUE) -> list[str]:
    return [row["id"] for row in catalogue_rows(path)]


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def dump(entries: list[dict[str, Any]]) -> str:
    out = [
        "# mcp_ref requirement manifest: one table per normative statement of the 2025-11-25 spec.",
        "# status: implemented | divergent | not-applicable | planned. Edit with tools/manifest.py.",
        "# structural: why no single line enforces it; survivors: mutants known to survive (KEY -- why).",
        "",
    ]
    for e in entries:
        out.append("[[requirement]]")
        out.append(f"id = {_q(e['id'])}")
        out.append(f"status = {_q(e['status'])}")
        out.append("symbols = [" + ", ".join(_q(s) for s in e.get("symbols", [])) + "]")
        out.append(f"note = {_q(e.get('note', ''))}")
        if e.get("structural"):
            out.append(f"structural = {_q(e['structural'])}")
        if e.get("survivors"):
            out.append("survivors = [" + ", ".join(_q(s) for s in e["survivors"]) + "]")
        out.append("")
    return "\n".join(out)


@contextlib.contextmanager
def locked() -> Iterator[None]:
    MANIFEST.parent.mkdir(parents=True, exist_ok=True)
    with open(MANIFEST.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def save(entries: list[dict[str, Any]]) -> None:
    fd, tmp = tempfile.mkstemp(dir=MANIFEST.parent, prefix=".requirements.", suffix=".toml")
    with os.fdopen(fd, "w") as f:
        f.write(dump(entries))
    os.replace(tmp, MANIFEST)


def cmd_init(_: argparse.Namespace) -> int:
    with locked():
        existing = {e["id"]: e for e in load()}
        entries = []
        for rid in catalogue_ids():
            entries.append(existing.get(rid) or {"id": rid, "status": "planned", "symbols": [], "note": ""})
        dropped = sorted(set(existing) - {e["id"] for e in entries})
        save(entries)
    print(f"{len(entries)} requirements; {len(dropped)} dropped (no longer in the catalogue): {dropped}")
    return 0


SURVIVOR_SEP = " -- "


def survivor_key(entry: str) -> str:
    """The mutant key of a ``survivors`` item ("KEY -- why")."""
    return entry.split(SURVIVOR_SEP, 1)[0].strip()


def survivor_problem(entry: str) -> str | None:
    """What is wrong with one ``survivors`` item, or None."""
    key, sep, why = entry.partition(SURVIVOR_SEP)
    if not sep or not why.strip():
        return f"{entry!r}: write 'KEY -- why it survives'"
    if not MUTANT_KEY_RE.fullmatch(key.strip()):
        return f"{entry!r}: {key.strip()!r} is not a mutant key as mutate prints them"
    return None


def cmd_set(args: argparse.Namespace) -> int:
    if args.status is not None and args.status not in STATUSES:
        print(f"status must be one of {STATUSES}", file=sys.stderr)
        return 2
    for entry in args.survivor or []:
        problem = survivor_problem(entry)
        if problem:
            print(f"--survivor {problem}", file=sys.stderr)
            return 2
    with locked():
        entries = load()
        by_id = {e["id"]: e for e in entries}
        missing = [i for i in args.ids if i not in by_id]
        if missing:
            print(f"unknown ids: {missing}", file=sys.stderr)
            return 2
        for rid in args.ids:
            e = by_id[rid]
            status = args.status or e["status"]
            note = args.note if args.note is not None else e.get("note", "")
            if status in ("divergent", "not-applicable") and not note:
                print(f"a {status} requirement needs --note ({rid})", file=sys.stderr)
                return 2
            e["status"] = status
            if args.symbols is not None:
                e["symbols"] = [s for s in args.symbols.split(",") if s]
            e["note"] = note
            if args.structural is not None:
                if args.structural:
                    e["structural"] = args.structural
                else:
                    e.pop("structural", None)
            if args.clear_survivors:
                e.pop("survivors", None)
            if args.survivor:
                kept = [s for s in e.get("survivors", []) if survivor_key(s) not in map(survivor_key, args.survivor)]
                e["survivors"] = kept + args.survivor
        save(entries)
    return 0


def counts(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for e in entries:
        row = table.setdefault(chapter_of(e["id"]), dict.fromkeys(STATUSES, 0))
        row[e["status"]] += 1
    return table


def cmd_coverage(_: argparse.Namespace) -> int:
    entries = load()
    table = counts(entries)
    width = max([len("chapter"), *map(len, table)])
    print(f"{'chapter':<{width}}  {'impl':>5} {'div':>4} {'n/a':>4} {'plan':>5} {'total':>6}")
    for chapter in sorted(table):
        r = table[chapter]
        print(
            f"{chapter:<{width}}  {r['implemented']:>5} {r['divergent']:>4} {r['not-applicable']:>4}"
            f" {r['planned']:>5} {sum(r.values()):>6}"
        )
    tot = {s: sum(r[s] for r in table.values()) for s in STATUSES}
    print(
        f"total: {tot['implemented']} implemented, {tot['divergent']} divergent, "
        f"{tot['not-applicable']} not-applicable, {tot['planned']} planned of {len(entries)}"
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for e in load():
        if args.status and e["status"] != args.status:
            continue
        if args.chapter and chapter_of(e["id"]) != args.chapter:
            continue
        print(f"{e['id']:<40} {e['status']:<15} {e.get('note', '')}")
    return 0


# -- citations in code -------------------------------------------------------------------------

_CHAPTER = r"[a-z][a-z0-9_/-]*"
_ITEM = rf"(?:{_CHAPTER})?#\d+(?:\s*-\s*#?\d+)?"
CITATION_RE = re.compile(rf"\[({_ITEM}(?:\s*,\s*{_ITEM})*)\]")
_ITEM_RE = re.compile(rf"\s*({_CHAPTER})?#(\d+)(?:\s*-\s*#?(\d+))?\s*")


def cited_in(text: str) -> list[str]:
    """The requirement ids a piece of text cites, in order.

    ``[a/b#3]``; ``[a/b#3, #5]`` (a bare ``#N`` keeps the chapter before it,
    also from an earlier group of the same comment or docstring: ``[a/b#3] ...
    [#5]``); ``[a/b#9-#11]`` (a range); ``[a/b#3, c#7]``. A section anchor
    such as ``[a/b#some-section]`` is no id.
    """
    ids: list[str] = []
    chapter = ""
    for m in CITATION_RE.finditer(text):
        for item in m.group(1).split(","):
            im = _ITEM_RE.fullmatch(item)
            if im is None:  # the outer pattern admits only items
                raise AssertionError(item)
            chapter = im.group(1) or chapter
            if not chapter:  # a bare [#N] with no chapter before it names nothing
                break
            lo = int(im.group(2))
            hi = int(im.group(3) or lo)
            ids.extend(f"{chapter}#{n}" for n in range(lo, max(lo, hi) + 1))
    return ids


@dataclasses.dataclass(frozen=True)
class Citation:
    path: str  # relative to the root, POSIX
    line: int  # the comment's line, or the docstring's first line
    ids: tuple[str, ...]
    text: str  # the comment or docstring line holding the citation
    docstring: bool


_Owner = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _docstring_owners(tree: ast.Module) -> dict[int, _Owner]:
    """Line of each docstring -> its module, class or function."""
    owners: dict[int, _Owner] = {}
    for node in ast.walk(tree):
        if isinstance(node, _Owner) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                owners[first.lineno] = node
    return owners


def file_citations(source: str, path: str) -> list[Citation]:
    """Every citation in one module's comments and docstrings."""
    found: list[Citation] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and (ids := cited_in(tok.string)):
            found.append(Citation(path, tok.start[0], tuple(ids), tok.string.strip(), False))
    tree = ast.parse(source)
    for line, owner in _docstring_owners(tree).items():
        doc = ast.get_docstring(owner, clean=False) or ""
        if ids := cited_in(doc):
            first = next((ln.strip() for ln in doc.splitlines() if CITATION_RE.search(ln)), "")
            found.append(Citation(path, line, tuple(ids), first, True))
    return sorted(found, key=lambda c: c.line)


def citations(root: Path = ROOT, package: str = PACKAGE) -> list[Citation]:
    """Every citation under ``root/package``."""
    found: list[Citation] = []
    for path in sorted((root / package).rglob("*.py")):
        found.extend(file_citations(path.read_text(), path.relative_to(root).as_posix()))
    return found


def citations_by_id(cites: Iterable[Citation]) -> dict[str, list[Citation]]:
    by_id: dict[str, list[Citation]] = {}
    for c in cites:
        for rid in dict.fromkeys(c.ids):
            by_id.setdefault(rid, []).append(c)
    return by_id


# -- citations in tests ------------------------------------------------------------------------


def _is_req_marker(func: ast.expr) -> bool:
    # pytest.mark.req(...) or mark.req(...)
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "req"
        and (
            (isinstance(func.value, ast.Attribute) and func.value.attr == "mark")
            or (isinstance(func.value, ast.Name) and func.value.id == "mark")
        )
    )


def _marker_ids(decorators: Iterable[ast.expr]) -> list[str]:
    ids: list[str] = []
    for d in decorators:
        if isinstance(d, ast.Call) and _is_req_marker(d.func):
            ids.extend(a.value for a in d.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return ids


def _pytestmark_ids(body: list[ast.stmt]) -> list[str]:
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            value = stmt.value
            marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            return _marker_ids(marks)
    return []


def citing_tests(root: Path = ROOT) -> dict[str, list[str]]:
    """id -> pytest node ids (file::test or file::Class::test) of the tests citing it."""
    found: dict[str, list[str]] = {}

    def visit(body: list[ast.stmt], prefix: str, inherited: list[str]) -> None:
        inherited = inherited + _pytestmark_ids(body)
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}::{node.name}", inherited + _marker_ids(node.decorator_list))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                for rid in dict.fromkeys(inherited + _marker_ids(node.decorator_list)):
                    found.setdefault(rid, []).append(f"{prefix}::{node.name}")

    for path in sorted((root / "tests").rglob("test*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        visit(tree.body, path.relative_to(root).as_posix(), [])
    return found


# -- what a citation annotates, and how to break it --------------------------------------------


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(int(d.lineno) for d in decorators)])


def _first_child_line(node: ast.stmt) -> int | None:
    """The first line of a compound statement's block (None for a simple statement)."""
    if isinstance(node, ast.Match):
        return node.cases[0].pattern.lineno
    body = getattr(node, "body", None)
    if isinstance(body, list) and body:
        return _start(body[0])
    return None


@dataclasses.dataclass(frozen=True)
class _Span:
    """Where an element of a literal or call sits (ast's position attributes)."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int


@dataclasses.dataclass
class _Stmt:
    node: ast.stmt
    depth: int
    qualname: str
    element: _Span | None = None  # a dict entry, list item or call argument inside the statement


def _elements(node: ast.stmt) -> list[_Span]:
    """The entries of dict, list, tuple and set displays and the arguments of calls
    in a simple statement: what a comment inside a multi-line expression annotates."""
    spans: list[_Span] = []

    def span(a: ast.expr | ast.keyword, b: ast.expr | ast.keyword) -> _Span:
        return _Span(a.lineno, a.col_offset, b.end_lineno or b.lineno, b.end_col_offset or 0)

    for sub in ast.walk(node):
        if isinstance(sub, ast.Dict):
            spans.extend(span(k, v) for k, v in zip(sub.keys, sub.values) if k is not None)
        elif isinstance(sub, ast.List | ast.Tuple | ast.Set):
            spans.extend(span(e, e) for e in sub.elts)
        elif isinstance(sub, ast.Call):
            spans.extend(span(a, a) for a in sub.args)
            spans.extend(span(k, k) for k in sub.keywords)
    return spans


def _element_at(stmt: _Stmt, line: int, trailing: bool) -> _Span | None:
    """The element a comment inside a multi-line simple statement annotates: for a
    comment after code, the outermost element starting on its line (else the
    innermost holding it); for a comment on its own line, the next element."""
    spans = [e for e in _elements(stmt.node) if e.lineno > stmt.node.lineno or e.end_lineno > stmt.node.lineno]
    if trailing:
        starting = [e for e in spans if e.lineno == line]
        if starting:
            return max(starting, key=lambda e: (e.end_lineno, e.end_col_offset, -e.col_offset))
        holding = [e for e in spans if e.lineno <= line <= e.end_lineno]
        return max(holding, key=lambda e: (e.lineno, e.col_offset, -e.end_lineno)) if holding else None
    after = [e for e in spans if e.lineno > line]
    if not after:
        return None
    first = min(e.lineno for e in after)
    return max((e for e in after if e.lineno == first), key=lambda e: (-e.col_offset, e.end_lineno))


def _statements(tree: ast.Module) -> list[_Stmt]:
    out: list[_Stmt] = []

    def visit(node: ast.AST, depth: int, qual: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                out.append(_Stmt(child, depth, qual))
                inner = qual
                if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    inner = f"{qual}.{child.name}" if qual else child.name
                visit(child, depth + 1, inner)
            elif not isinstance(child, ast.expr):  # excepthandler, match_case...
                visit(child, depth, qual)

    visit(tree, 0, "")
    return out


_NOT_CODE = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)


def code_lines(source: str) -> set[int]:
    """The lines holding code (not only a comment, not blank)."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _NOT_CODE:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def annotated(
    source: str, tree: ast.Module, cite: Citation, stmts: list[_Stmt] | None = None, code: set[int] | None = None
) -> _Stmt | None:
    """The statement a citation annotates.

    A docstring annotates its function or class. A comment annotates the innermost
    statement whose lines hold it when that is a simple statement or the comment
    sits in a compound statement's header (``if``, ``def`` ... up to the colon);
    otherwise the next statement.
    """
    stmts = stmts if stmts is not None else _statements(tree)
    if cite.docstring:
        owner = [s for s in stmts if s.node.lineno < cite.line and _first_child_line(s.node) == cite.line]
        return owner[-1] if owner else None
    line = cite.line
    holding = [s for s in stmts if _start(s.node) <= line <= (s.node.end_lineno or s.node.lineno)]
    code = code if code is not None else code_lines(source)
    if holding:
        inner = max(holding, key=lambda s: s.depth)
        first = _first_child_line(inner.node)
        if first is None:
            if line > inner.node.lineno:  # inside a multi-line expression
                element = _element_at(inner, line, trailing=line in code)
                if element is not None:
                    return dataclasses.replace(inner, element=element)
            return inner
        header_end = max((n for n in range(inner.node.lineno, first) if n in code), default=inner.node.lineno)
        if line <= header_end:
            return inner
    after = [s for s in stmts if _start(s.node) > line]
    if not after:
        return None
    return min(after, key=lambda s: (_start(s.node), s.depth))


@dataclasses.dataclass(frozen=True)
class Mutant:
    key: str  # stable across line moves: path:qualname:op:hash of the statement's first line
    path: str
    line: int  # the statement's first line
    op: str  # negate | return-early | skip | delete
    source: str  # the whole mutated module
    diff: str


MUTANT_KEY_RE = re.compile(r"[\w./-]+\.py:[\w.<>]*:(negate|return-early|skip|delete):[0-9a-f]{8}")
_BOOLISH = (ast.Compare, ast.BoolOp)


def _is_boolish(node: ast.expr | None) -> bool:
    if isinstance(node, _BOOLISH):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


def _col(line: str, byte_col: int) -> int:
    """ast columns count UTF-8 bytes; str slicing counts characters."""
    return len(line.encode()[:byte_col].decode())


_Located = ast.expr | ast.stmt | _Span


def _splice(lines: list[str], node: _Located, text: str) -> list[str]:
    """Replace the source of ``node`` by ``text``."""
    l1, l2 = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    c1 = _col(lines[l1], node.col_offset)
    c2 = _col(lines[l2], node.end_col_offset or 0)
    return [*lines[:l1], lines[l1][:c1] + text + lines[l2][c2:], *lines[l2 + 1 :]]


def _delete_element(lines: list[str], span: _Span) -> list[str]:
    """Remove an element and the comma after it."""
    l1, l2 = span.lineno - 1, span.end_lineno - 1
    head = lines[l1][: _col(lines[l1], span.col_offset)]
    tail = lines[l2][_col(lines[l2], span.end_col_offset) :]
    if tail.lstrip().startswith(","):
        tail = tail.lstrip()[1:]
    return [*lines[:l1], head + tail, *lines[l2 + 1 :]]


def _segment(lines: list[str], node: _Located) -> str:
    l1, l2 = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if l1 == l2:
        line = lines[l1]
        return line[_col(line, node.col_offset) : _col(line, node.end_col_offset or 0)]
    head = lines[l1][_col(lines[l1], node.col_offset) :]
    tail = lines[l2][: _col(lines[l2], node.end_col_offset or 0)]
    return head + "".join(lines[l1 + 1 : l2]) + tail


def _return_early(lines: list[str], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    body = fn.body
    first = body[0]
    doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    anchor = body[1] if doc and len(body) > 1 else (None if doc else first)
    if anchor is not None:
        at = anchor.lineno - 1
        line = lines[at]
        indent = line[: len(line) - len(line.lstrip())]
        return [*lines[:at], f"{indent}return\n", *lines[at:]]
    at = (first.end_lineno or first.lineno) - 1  # only a docstring: return after it
    line = lines[first.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    return [*lines[: at + 1], f"{indent}return\n", *lines[at + 1 :]]


def mutate_statement(source: str, stmt: _Stmt) -> tuple[str, list[str]] | None:
    """(operator, mutated lines) for the statement, or None when nothing applies."""
    lines = source.splitlines(keepends=True)
    node = stmt.node
    if stmt.element is not None:
        return "delete", _delete_element(lines, stmt.element)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return "return-early", _return_early(lines, node)
    if isinstance(node, ast.If | ast.While):
        return "negate", _splice(lines, node.test, f"not ({_segment(lines, node.test)})")
    if isinstance(node, ast.Return | ast.Assign | ast.AnnAssign | ast.AugAssign) and _is_boolish(node.value):
        value = node.value
        assert value is not None
        return "negate", _splice(lines, value, f"not ({_segment(lines, value)})")
    if isinstance(node, ast.ClassDef | ast.Pass):
        return None
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return None  # a bare string
    compound = _first_child_line(node) is not None
    return ("skip" if compound else "delete"), _splice(lines, node, "pass")


def _mutant_key(path: str, stmt: _Stmt, op: str, lines: list[str]) -> str:
    head = lines[(stmt.element or stmt.node).lineno - 1].strip()
    digest = hashlib.sha1(head.encode()).hexdigest()[:8]
    qual = stmt.qualname
    if isinstance(stmt.node, ast.FunctionDef | ast.AsyncFunctionDef):  # name the function itself
        qual = f"{qual}.{stmt.node.name}" if qual else stmt.node.name
    return f"{path}:{qual or '<module>'}:{op}:{digest}"


def mutants_for(root: Path, cites: Iterable[Citation]) -> tuple[list[Mutant], list[str]]:
    """The mutants of the statements these citations annotate (one per statement),
    and notes on citations that give none."""
    mutants: list[Mutant] = []
    notes: list[str] = []
    seen: set[tuple[str, int, _Span | None]] = set()
    parsed: dict[str, tuple[str, ast.Module, list[_Stmt], set[int]]] = {}
    for cite in cites:
        if cite.path not in parsed:
            source = (root / cite.path).read_text()
            tree = ast.parse(source)
            parsed[cite.path] = (source, tree, _statements(tree), code_lines(source))
        source, tree, stmts, code = parsed[cite.path]
        stmt = annotated(source, tree, cite, stmts, code)
        where = f"{cite.path}:{cite.line}"
        if stmt is None:
            notes.append(f"{where}: " + ("a module docstring" if cite.docstring else "no statement follows"))
            continue
        if (cite.path, stmt.node.lineno, stmt.element) in seen:
            continue
        seen.add((cite.path, stmt.node.lineno, stmt.element))
        made = mutate_statement(source, stmt)
        if made is None:
            kind = type(stmt.node).__name__
            notes.append(f"{where}: annotates a {kind} (line {stmt.node.lineno}), nothing to mutate")
            continue
        op, new_lines = made
        new_source = "".join(new_lines)
        try:
            new_tree = ast.parse(new_source)
        except SyntaxError as e:  # a bug of this tool: say so rather than count it killed
            notes.append(f"{where}: the {op} mutant does not parse ({e})")
            continue
        if ast.dump(new_tree) == ast.dump(tree):
            notes.append(f"{where}: the {op} mutant is the same program")
            continue
        old_lines = source.splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(old_lines, new_lines, f"a/{cite.path}", f"b/{cite.path}", n=1))
        key = _mutant_key(cite.path, stmt, op, old_lines)
        if any(m.key == key for m in mutants):
            key = f"{key[:-8]}{hashlib.sha1(f'{key}{stmt.node.lineno}'.encode()).hexdigest()[:8]}"
        mutants.append(Mutant(key, cite.path, (stmt.element or stmt.node).lineno, op, new_source, diff))
    return mutants, notes


# -- running the tests against a mutant --------------------------------------------------------

_COPY_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "build",
    "dist",
    "*.egg-info",
    "node_modules",
)


class Scratch:
    """A copy of the repository in a temporary directory, with ../shared beside it
    as a link when the original has one. Mutants are written into it one at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._tmp = tempfile.TemporaryDirectory(prefix="mcp_ref-mutate-")
        self.dir = Path(self._tmp.name) / "repo"
        shutil.copytree(root, self.dir, ignore=_COPY_IGNORE, symlinks=True)
        if SHARED.exists():  # the tests read the spec from ../shared
            (self.dir.parent / "shared").symlink_to(SHARED.resolve())
        self._stamp = int(time.time()) + 10

    def env(self) -> dict[str, str]:
        """The scratch copy first on sys.path, for pytest and every process a test starts."""
        path = os.environ.get("PYTHONPATH")
        return {**os.environ, "PYTHONPATH": str(self.dir) + (os.pathsep + path if path else "")}

    def write(self, rel: str, text: str) -> None:
        # A fresh whole-second mtime on every write: a cached .pyc of the previous
        # version (keyed by mtime and size) can never be taken for this one.
        target = self.dir / rel
        target.write_text(text)
        self._stamp += 2
        os.utime(target, (self._stamp, self._stamp))

    def imported_from(self, module: str = PACKAGE) -> str:
        """Where ``module`` is imported from in this copy (the check that the copy, not
        an installed or editable one, is what the tests see)."""
        out = subprocess.run(
            [sys.executable, "-c", f"import {module}; print({module}.__file__)"],
            cwd=self.dir,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return out.stdout.strip()

    def collect_citing(self) -> dict[str, list[str]] | None:
        """id -> node ids of the tests marked ``req(id)``, as pytest collects them in
        this copy (None if the collection fails)."""
        plugin = self.dir / "_mcp_ref_req_collect.py"
        plugin.write_text(_COLLECT_PLUGIN)
        out = self.dir.parent / "req-collect.json"
        cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        proc = subprocess.run(
            [*cmd, "-p", plugin.stem],
            cwd=self.dir,
            env={**self.env(), "MCP_REF_REQ_COLLECT": str(out)},
            capture_output=True,
            text=True,
            timeout=600,
        )
        plugin.unlink()
        if proc.returncode != 0 or not out.exists():
            print(
                f"mutate: collecting the tests failed; reading markers from the source\n{proc.stdout[-1000:]}",
                file=sys.stderr,
            )
            return None
        found: dict[str, list[str]] = json.loads(out.read_text())
        return found

    def run(self, nodeids: list[str], timeout: float) -> tuple[str, float, str]:
        """Run tests: ('passed' | 'failed' | 'timeout' | 'error', seconds, output tail)."""
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "--no-header", "--tb=line", "-p", "no:cacheprovider"]
        start = time.monotonic()
        proc = subprocess.Popen(
            [*cmd, *nodeids],
            cwd=self.dir,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the test run and whatever it started
            out, _ = proc.communicate()
            return "timeout", time.monotonic() - start, out[-2000:]
        # Any failure is a kill, whatever pytest's exit code: the baseline run already
        # showed that these node ids exist and pass on the unmutated code.
        return ("passed" if proc.returncode == 0 else "failed"), time.monotonic() - start, out[-2000:]

    def close(self) -> None:
        self._tmp.cleanup()


_COLLECT_PLUGIN = """\
import json
import os


def pytest_collection_modifyitems(session, config, items):
    found = {}
    for item in items:
        for mark in item.iter_markers("req"):
            for rid in mark.args:
                if isinstance(rid, str) and item.nodeid not in found.setdefault(rid, []):
                    found[rid].append(item.nodeid)
    with open(os.environ["MCP_REF_REQ_COLLECT"], "w") as f:
        json.dump(found, f)
"""


@dataclasses.dataclass
class Outcome:
    rid: str
    mutant: Mutant
    result: str  # killed | survived | timeout (killed) | error
    seconds: float
    accepted: str | None = None  # why it may survive (from the manifest)
    output: str = ""


def suggest(rid: str, known: Iterable[str]) -> str:
    """For an unknown id: the full ids it may be short for (``cancellation#8``), or near ones."""
    known = list(known)
    matches = [k for k in known if k.endswith("/" + rid)]
    if not matches:  # a slip of the pen, in the full id or in its last part
        short: dict[str, list[str]] = {}
        for k in known:
            short.setdefault(k.rsplit("/", 1)[-1], []).append(k)
        near = difflib.get_close_matches(rid.rsplit("/", 1)[-1], short, n=3, cutoff=0.8)
        matches = [k for n in near for k in short[n] if rid.count("/") == 0 or k.endswith(rid.rsplit("/", 1)[0])]
        matches = matches or difflib.get_close_matches(rid, known, n=3, cutoff=0.8)
    return f" (did you mean {' or '.join(matches[:5])}?)" if matches else ""


def select_ids(entries: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    status = args.status or "implemented"
    known = {e["id"]: e for e in entries}
    if args.ids:
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise SystemExit("unknown ids: " + ", ".join(i + suggest(i, known) for i in unknown))
        chosen = list(args.ids)
    else:
        chosen = [e["id"] for e in entries if e["status"] == status]
    if args.chapter:
        chosen = [
            i for i in chosen if any(chapter_of(i) == c or chapter_of(i).startswith(c + "/") for c in args.chapter)
        ]
    if args.sample is not None and args.sample < len(chosen):
        chosen = sorted(random.Random(args.seed).sample(sorted(chosen), args.sample), key=chosen.index)
    return chosen


def _ratio(killed: int, total: int) -> str:
    return f"{100.0 * killed / total:.1f} %" if total else "n/a"


def cmd_mutate(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve() if args.root else ROOT
    entries = load(root / "spec_notes" / "requirements.toml")
    by_entry = {e["id"]: e for e in entries}
    ids = select_ids(entries, args)
    cites = citations_by_id(citations(root))
    log = sys.stderr if args.json else sys.stdout

    plan: dict[str, dict[str, Any]] = {}
    mutants: dict[str, list[Mutant]] = {}
    for rid in ids:
        entry = by_entry[rid]
        info: dict[str, Any] = {"id": rid, "status": "mutated", "tests": [], "notes": []}
        plan[rid] = info
        if not cites.get(rid):
            if entry.get("structural"):
                info["status"] = "structural"
                info["notes"].append(entry["structural"])
            elif entry["status"] != "implemented":
                # nothing to break, and none expected: not a defect like an uncited implemented id
                info["status"] = entry["status"]
                info["notes"].append(f"not mutated: its status is {entry['status']} and no line cites it")
            else:
                info["status"] = "uncited"
                info["notes"].append("no [id] citation in the code and no structural note")
            continue
        muts, notes = mutants_for(root, cites[rid])
        info["notes"].extend(notes)
        if not muts:
            info["status"] = "no-mutant"
            continue
        mutants[rid] = muts

    if mutants and not args.dry_run:
        problem = runner_problem(root)
        if problem is not None:
            venv = root / ".venv" / "bin" / "python"
            if venv.exists() and not _in_venv(root) and not os.environ.get("MCP_REF_MUTATE_REEXEC"):
                print(f"mutate: {problem}; running it again with {venv}", file=sys.stderr)
                sys.stdout.flush()
                os.environ["MCP_REF_MUTATE_REEXEC"] = "1"  # once: no loop if that python lacks them too
                os.execv(venv, [str(venv), str(Path(__file__).resolve()), *args.argv])
            print(
                f"mutate: {problem}; run it with .venv/bin/python (make test creates it; make mutate ID=... uses it)",
                file=sys.stderr,
            )
            return 2
    scratches = [] if args.dry_run or not mutants else [Scratch(root) for _ in range(max(1, args.jobs))]
    try:
        return _mutate(args, ids, plan, mutants, scratches, by_entry, log)
    finally:
        for s in scratches:
            s.close()


def _in_venv(root: Path) -> bool:
    return Path(sys.prefix).resolve() == (root / ".venv").resolve()


def runner_problem(root: Path, python: str | None = None) -> str | None:
    """Why ``python`` (this one by default) cannot run the tests of the checkout at ``root``:
    pytest or the package (with its dependencies) does not import. None when it can."""
    python = python or sys.executable
    path = os.environ.get("PYTHONPATH")
    proc = subprocess.run(
        [python, "-c", f"import pytest, {PACKAGE}"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root) + (os.pathsep + path if path else "")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()
    return f"{python} cannot import pytest and {PACKAGE} ({lines[-1] if lines else f'exit {proc.returncode}'})"


def _mutate(
    args: argparse.Namespace,
    ids: list[str],
    plan: dict[str, dict[str, Any]],
    mutants: dict[str, list[Mutant]],
    scratches: list[Scratch],
    by_entry: dict[str, dict[str, Any]],
    log: Any,
) -> int:
    root = Path(args.root).resolve() if args.root else ROOT
    # the tests citing each id: as pytest collects them (markers set dynamically, e.g. on
    # parametrized cases, included), else as the markers read in the source say
    tests = scratches[0].collect_citing() if scratches else None
    if tests is None:
        tests = citing_tests(root)
    jobs: list[tuple[str, Mutant]] = []
    for rid, muts in mutants.items():
        info = plan[rid]
        info["tests"] = tests.get(rid, [])
        if not info["tests"]:
            info["status"] = "untested"
            continue
        jobs.extend((rid, m) for m in muts)

    print(f"{len(ids)} ids, {len(jobs)} mutants", file=log)
    outcomes: list[Outcome] = []
    if args.dry_run:
        for rid in ids:
            info = plan[rid]
            print(f"{rid}: {info['status']}, {len(info['tests'])} tests  {'; '.join(info['notes'])}")
            for r, m in jobs:
                if r == rid:
                    print(f"  {m.key}")
                    print(textwrap.indent(m.diff.rstrip(), "    "))
        return 0
    if jobs:
        for s in scratches:
            where = s.imported_from()
            if not Path(where).resolve().is_relative_to(s.dir.resolve()):
                print(f"mutate: {PACKAGE} is imported from {where}, not the scratch copy", file=sys.stderr)
                return 2
        baseline_ids = list(dict.fromkeys(n for rid, _ in jobs for n in plan[rid]["tests"]))
        result, seconds, out = "passed", 0.0, ""
        if not args.no_baseline:
            result, seconds, out = scratches[0].run(baseline_ids, timeout=args.timeout * 10)
            print(f"baseline: {len(baseline_ids)} tests {result} in {seconds:.1f}s", file=log)
        if result != "passed":
            print(out, file=sys.stderr)
            print("mutate: the citing tests fail without any mutant; fix them first", file=sys.stderr)
            return 2
        outcomes = _run_all(jobs, plan, scratches, args.timeout, log)

    for o in outcomes:
        if o.result == "survived":
            accepted = {survivor_key(s): s for s in by_entry[o.rid].get("survivors", [])}
            o.accepted = accepted.get(o.mutant.key)
    return _report(ids, plan, outcomes, args)


def _run_all(
    jobs: list[tuple[str, Mutant]], plan: dict[str, dict[str, Any]], scratches: list[Scratch], timeout: float, log: Any
) -> list[Outcome]:
    pool: queue.Queue[Scratch] = queue.Queue()
    for s in scratches:
        pool.put(s)
    done: list[Outcome] = []
    lock = threading.Lock()

    def one(rid: str, m: Mutant) -> Outcome:
        s = pool.get()
        try:
            original = (s.dir / m.path).read_text()
            s.write(m.path, m.source)
            try:
                result, seconds, out = s.run(plan[rid]["tests"], timeout)
            finally:
                s.write(m.path, original)
        finally:
            pool.put(s)
        verdict = {"passed": "survived", "failed": "killed", "timeout": "timeout"}.get(result, "error")
        o = Outcome(rid, m, verdict, seconds, output=out if verdict == "error" else "")
        with lock:
            done.append(o)
            print(f"[{len(done)}/{len(jobs)}] {verdict:<8} {rid}  {m.path}:{m.line} {m.op} ({seconds:.1f}s)", file=log)
        return o

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(scratches)) as ex:
        futures = [ex.submit(one, rid, m) for rid, m in jobs]
        return [f.result() for f in futures]


def _report(ids: list[str], plan: dict[str, dict[str, Any]], outcomes: list[Outcome], args: argparse.Namespace) -> int:
    per_id: dict[str, list[Outcome]] = {}
    for o in outcomes:
        per_id.setdefault(o.rid, []).append(o)
    killed = sum(o.result in ("killed", "timeout") for o in outcomes)
    survived = [o for o in outcomes if o.result == "survived"]
    errors = [o for o in outcomes if o.result == "error"]
    unexplained = [o for o in survived if not o.accepted]
    uncited = [rid for rid in ids if plan[rid]["status"] in ("uncited", "untested")]
    scored = killed + len(survived)
    summary: dict[str, Any] = {
        "ids": len(ids),
        "mutants": len(outcomes),
        "killed": killed,
        "survived": len(survived),
        "accepted": len(survived) - len(unexplained),
        "errors": len(errors),
        "kill_ratio": round(killed / scored, 4) if scored else None,
        "by_status": {
            s: sum(plan[r]["status"] == s for r in ids) for s in sorted({p["status"] for p in plan.values()})
        },
    }
    if args.json:
        out = []
        for rid in ids:
            info = dict(plan[rid])
            info["mutants"] = [
                {
                    "key": o.mutant.key,
                    "path": o.mutant.path,
                    "line": o.mutant.line,
                    "op": o.mutant.op,
                    "result": o.result,
                    "seconds": round(o.seconds, 2),
                    "accepted": o.accepted,
                    "diff": o.mutant.diff,
                    **({"output": o.output} if o.output else {}),
                }
                for o in per_id.get(rid, [])
            ]
            out.append(info)
        json.dump({"summary": summary, "ids": out}, sys.stdout, indent=2)
        print()
    else:
        print()
        for rid in ids:
            info, outs = plan[rid], per_id.get(rid, [])
            if info["status"] != "mutated":
                print(f"{rid}: {info['status']} -- {'; '.join(info['notes'])}")
                continue
            k = sum(o.result in ("killed", "timeout") for o in outs)
            lived = [o for o in outs if o.result == "survived"]
            erred = sum(o.result == "error" for o in outs)
            line = f"{rid}: {len(outs)} mutants, {k} killed, {len(lived)} survived"
            line += f" ({sum(bool(o.accepted) for o in lived)} accepted)" if lived else ""
            line += f", {erred} errors" if erred else ""
            print(line + (f"  ({'; '.join(info['notes'])})" if info["notes"] else ""))
            for o in outs:
                if o.result in ("survived", "error"):
                    label = "SURVIVED" if o.result == "survived" else "ERROR"
                    if o.accepted:
                        label = "survived (accepted: " + o.accepted.split(SURVIVOR_SEP, 1)[1] + ")"
                    print(f"  {label} {o.mutant.key}")
                    print(textwrap.indent(o.mutant.diff.rstrip(), "    "))
                    if o.output:
                        print(textwrap.indent(o.output.rstrip()[-600:], "    | "))
        print()
        print(
            f"total: {len(ids)} ids, {len(outcomes)} mutants, {killed} killed, {len(survived)} survived "
            f"({summary['accepted']} accepted), {len(errors)} errors; kill ratio {_ratio(killed, scored)}"
        )
        others = {s: n for s, n in summary["by_status"].items() if s != "mutated" and n}
        if others:
            print("ids not mutated: " + ", ".join(f"{n} {s}" for s, n in others.items()))
    return 1 if unexplained or errors or uncited else 0


# -- show ----------------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve() if args.root else ROOT
    entries = load(root / "spec_notes" / "requirements.toml")
    entry = next((e for e in entries if e["id"] == args.id), None)
    if entry is None:
        print(f"unknown id {args.id}{suggest(args.id, (e['id'] for e in entries))}", file=sys.stderr)
        return 2
    print(args.id)
    if CATALOGUE.exists():
        row = next((r for r in catalogue_rows() if r["id"] == args.id), None)
        if row is None:
            print("  (not in the catalogue)")
        else:
            print(f"  level: {row['keyword']}   party: {row['party']}   {row['file']}:{row['line']}  {row['section']}")
            print(textwrap.indent(textwrap.fill(row["text"], 100), "  | "))
    else:
        print(f"  (statement not shown: the catalogue {CATALOGUE} is absent; set MCP_REF_SHARED to the shared dir)")
    print(f"status: {entry['status']}")
    print(f"symbols: {', '.join(entry.get('symbols', [])) or '-'}")
    print(f"note: {entry.get('note') or '-'}")
    if entry.get("structural"):
        print(f"structural: {entry['structural']}")
    for s in entry.get("survivors", []):
        print(f"accepted survivor: {s}")
    cites = citations_by_id(citations(root)).get(args.id, [])
    print(f"enforcing lines ({len(cites)}):")
    trees: dict[str, tuple[str, ast.Module]] = {}
    for c in cites:
        if c.path not in trees:
            src = (root / c.path).read_text()
            trees[c.path] = (src, ast.parse(src))
        src, tree = trees[c.path]
        lines = src.splitlines()
        stmt = annotated(src, tree, c)
        at = (stmt.element or stmt.node).lineno if stmt else 0
        target = f"-> {at}: {lines[at - 1].strip()[:80]}" if stmt else "-> (no statement)"
        print(f"  {c.path}:{c.line}  {c.text[:110]}")
        print(f"      {target}")
    tests = citing_tests(root).get(args.id, [])
    print(f"citing tests ({len(tests)}):")
    for t in tests:
        print(f"  {t}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("init").set_defaults(fn=cmd_init)
    s = sub.add_parser("set")
    s.add_argument("ids", nargs="+")
    s.add_argument("--status")
    s.add_argument("--symbols")
    s.add_argument("--note")
    s.add_argument("--structural", help="why no single line enforces it ('' removes it)")
    s.add_argument("--survivor", action="append", help="'KEY -- why' a mutant may survive (repeatable)")
    s.add_argument("--clear-survivors", action="store_true")
    s.set_defaults(fn=cmd_set)
    sub.add_parser("coverage").set_defaults(fn=cmd_coverage)
    s = sub.add_parser("show")
    s.add_argument("id")
    s.add_argument("--root", help=argparse.SUPPRESS)
    s.set_defaults(fn=cmd_show)
    s = sub.add_parser("list")
    s.add_argument("--status")
    s.add_argument("--chapter")
    s.set_defaults(fn=cmd_list)
    s = sub.add_parser("mutate", help="break the lines citing each id; run the tests citing it")
    s.add_argument("ids", nargs="*")
    s.add_argument("--chapter", action="append", help="a chapter or a chapter prefix (repeatable)")
    s.add_argument("--status", help="ids of this status when none are given (default implemented)")
    s.add_argument("--sample", type=int, help="a random sample of this many of the selected ids")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own scratch copy")
    s.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant; a slower run counts as killed")
    s.add_argument("--json", action="store_true")
    s.add_argument("--dry-run", action="store_true", help="show the mutants and the tests; run nothing")
    s.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip running the citing tests unmutated first (when the suite has just passed, as in CI)",
    )
    s.add_argument("--root", help=argparse.SUPPRESS)
    s.set_defaults(fn=cmd_mutate)
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # to run again under the checkout's venv
    return int(args.fn(args))


def run_main() -> int:
    """main(), for a command line: a reader that stops early (``show ID | head``) ends the
    output quietly, with no BrokenPipeError traceback."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # nobody reads what is left: send it nowhere, so the flush at exit fails no more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":
    sys.exit(run_main())
