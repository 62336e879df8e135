#!/usr/bin/env python3
"""The requirement manifests: one per spec revision mcp_ref supports.

``spec_notes/requirements.toml`` is revision 2025-11-25's; every other revision has
``spec_notes/<revision>/requirements.toml`` (2026-07-28, 2025-06-18, 2025-03-26,
2024-11-05, and ``ext-tasks`` for the io.modelcontextprotocol/tasks extension). Each
holds one ``[[requirement]]`` table per id of that revision's catalogue
(``<spec>/<revision>/requirements.tsv``), with our status, the symbols that realise
it and a note in our own words.

An id names its revision with a prefix, ``2026-07-28:basic/patterns/mrtr#4``; an id
without one is 2025-11-25's (``server/tools#5`` and ``2025-11-25:server/tools#5`` are
the same id). Inside a manifest the ``id`` key is the catalogue's, unprefixed.

    tools/manifest.py init [--revision R] [--inherit REV ...]
                                                 create / refresh R's manifest from its catalogue
    tools/manifest.py set ID [ID...] [--revision R] [--status S] [--symbols a,b] [--note "..."]
                          [--same-as ID | --same-as ''] [--reviewed]
                          [--structural "why no single line"] [--survivor "KEY -- why"] [--clear-survivors]
    tools/manifest.py coverage [--revision R ...]  a chapter x status table per revision, with its total
    tools/manifest.py show ID [--revision R]     statement, our entry, enforcing lines, citing tests
                                                 (a short id such as cancellation#8 gets the full one suggested)
    tools/manifest.py list [--revision R] [--status S] [--chapter C] [--unreviewed]
    tools/manifest.py mutate [ID...] [--revision R] [--chapter C] [--status S] [--own] [--sample N --seed S]
                             [--dry-run] [--jobs J] [--timeout T] [--no-baseline] [--json]

``--revision`` says which revision an unprefixed ID (and ``--chapter``) belongs to;
the default is 2025-11-25 (``coverage`` and ``list``: every revision).

Optional keys of an entry:

- ``same_as``: the id of another revision (or another id of the same one) whose code
  realises this statement too, written with its revision
  (``same_as = "2025-11-25:server/tools#5"``). The entry's status follows the
  target's (``set`` on the target updates it), the target's citations and tests count
  for it, and ``mutate`` of it breaks the target's enforcing lines and runs the tests
  citing either id. A target is never itself a ``same_as`` entry. Valid only where the
  code path really is shared by both revisions: when it is not, detach the entry
  (``set ID --same-as '' --status planned``) and give it its own citations.
- ``reviewed = false``: a ``same_as`` that ``init`` made from identical text (same
  fingerprint) and nobody has checked against the code yet; ``set ID --reviewed``
  records the check.
- ``structural``: why no single line enforces an implemented id (the attrs model,
  a type, the shape of the whole module...). Such an id needs no ``[id]`` citation
  in mcp_ref/ and ``mutate`` reports it as structural instead of mutating it.
- ``survivors``: mutants of the id's enforcing lines that are known to survive,
  each ``"KEY -- why"`` with the KEY ``mutate`` prints. Only these may survive.

Citations in code: a comment or docstring holding ``[chapter#N]`` or
``[2026-07-28:chapter#N]``, with grouped forms ``[chapter#N, #M]``,
``[chapter#N-#M]`` and ``[a#N, b#M]``. In a group, a revision prefix holds for the
items after it (``[2026-07-28:a#1, b#2]`` cites two 2026-07-28 ids; write
``2025-11-25:`` to switch back); a bare ``#N`` keeps the chapter and revision before
it. A comment annotates the statement on its line, or else the next statement; a
docstring annotates its function. ``mutate`` breaks that statement in a scratch copy of
the repository (negate an if/while test or a boolean value, return early from a
function, skip a block, delete a statement) and runs only the tests citing the id
(``@pytest.mark.req``, with the same ids); a mutant that no test notices survives.

Standard library only; ``mutate`` runs the tests, so it needs a python with pytest and
mcp_ref's dependencies: the checkout's .venv (``make test`` creates it; ``make mutate
ID=...`` runs one id with it). Run with another python, ``mutate`` re-runs itself under
.venv/bin/python when there is one, and otherwise says so in one line. Writes are
atomic and serialised with a lock file. The catalogues are looked up as the tests look
for the spec: in $MCP_SPEC_DIR alone when it is set, else in ../shared/spec beside the
checkout (or $MCP_REF_SHARED/spec), then in spec/ (``make spec``).
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
SHARED = Path(os.environ.get("MCP_REF_SHARED") or ROOT.parent / "shared")
STATUSES = ("implemented", "divergent", "not-applicable", "planned")
KEYS = ("id", "status", "same_as", "reviewed", "symbols", "note", "structural", "survivors")
PACKAGE = "mcp_ref"
#: the revisions with a manifest, in the order ``coverage`` prints them (newest first);
#: ``ext-tasks`` is the io.modelcontextprotocol/tasks extension, used with 2026-07-28
REVISIONS = ("2026-07-28", "ext-tasks", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: the revision of an id without a prefix (every citation written before the others came)
DEFAULT_REVISION = "2025-11-25"
_REV = r"\d{4}-\d{2}-\d{2}|ext-[a-z][a-z0-9-]*"
_CHAPTER = r"[a-z][a-z0-9_/-]*"
#: a full id, as markers, ``same_as`` and the command line give it
ID_RE = re.compile(rf"(?:(?P<rev>{_REV}):)?(?P<local>{_CHAPTER}#\d+)")


def manifest_path(revision: str = DEFAULT_REVISION, root: Path = ROOT) -> Path:
    notes = root / "spec_notes"
    return notes / "requirements.toml" if revision == DEFAULT_REVISION else notes / revision / "requirements.toml"


MANIFEST = manifest_path()


def split_id(rid: str) -> tuple[str, str]:
    """(revision, the id inside its manifest): ``2026-07-28:a/b#1`` -> ("2026-07-28", "a/b#1"),
    ``a/b#1`` -> ("2025-11-25", "a/b#1")."""
    revision, sep, local = rid.partition(":")
    return (revision, local) if sep else (DEFAULT_REVISION, rid)


def qualify(revision: str, local: str) -> str:
    """The id as cited: prefixed with its revision, unless that is 2025-11-25."""
    return local if revision == DEFAULT_REVISION else f"{revision}:{local}"


def canonical(rid: str) -> str:
    """One spelling per id (``2025-11-25:a#1`` is ``a#1``)."""
    return qualify(*split_id(rid))


def written(rid: str) -> str:
    """The id with its revision always spelt out (how ``same_as`` names its target)."""
    revision, local = split_id(rid)
    return f"{revision}:{local}"


def chapter_of(req_id: str) -> str:
    return split_id(req_id)[1].split("#", 1)[0]


def spec_dirs(root: Path = ROOT) -> tuple[Path, ...]:
    """Where the catalogues are looked for, in order (as tests/conftest.py looks for the spec)."""
    chosen = os.environ.get("MCP_SPEC_DIR")
    if chosen:
        return (Path(chosen),)
    shared = Path(os.environ.get("MCP_REF_SHARED") or root.parent / "shared")
    return (shared / "spec", root / "spec")


def catalogue_path(revision: str = DEFAULT_REVISION, root: Path = ROOT) -> Path | None:
    """``<spec>/<revision>/requirements.tsv``, or None when no spec folder has it."""
    for folder in spec_dirs(root):
        path = folder / revision / "requirements.tsv"
        if path.exists():
            return path
    return None


def catalogue_missing(revision: str, root: Path = ROOT) -> str:
    where = " or ".join(str(d) for d in spec_dirs(root))
    return f"the catalogue {revision}/requirements.tsv is not in {where} (run `make spec`, or set MCP_SPEC_DIR)"


def load(path: Path | None = None) -> list[dict[str, Any]]:
    path = path or MANIFEST
    if not path.exists():
        return []
    with path.open("rb") as f:
        return list(tomllib.load(f).get("requirement", []))


def catalogue_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def catalogue_ids(path: Path) -> list[str]:
    return [row["id"] for row in catalogue_rows(path)]


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _what(revision: str) -> str:
    if revision == "ext-tasks":
        return "the io.modelcontextprotocol/tasks extension (ext-tasks)"
    return f"the {revision} spec"


def dump(entries: list[dict[str, Any]], revision: str = DEFAULT_REVISION) -> str:
    out = [
        f"# mcp_ref requirement manifest: one table per normative statement of {_what(revision)}.",
        "# status: implemented | divergent | not-applicable | planned. Edit with tools/manifest.py.",
        "# structural: why no single line enforces it; survivors: mutants known to survive (KEY -- why).",
        "# same_as: realised by the same code as that id, whose status, citations and tests count for it;",
        "# reviewed = false: a same_as made from identical text, not yet checked against the code.",
        "",
    ]
    for e in entries:
        out.append("[[requirement]]")
        out.append(f"id = {_q(e['id'])}")
        out.append(f"status = {_q(e['status'])}")
        if e.get("same_as"):
            out.append(f"same_as = {_q(e['same_as'])}")
        if e.get("reviewed") is False:
            out.append("reviewed = false")
        out.append("symbols = [" + ", ".join(_q(s) for s in e.get("symbols", [])) + "]")
        out.append(f"note = {_q(e.get('note', ''))}")
        if e.get("structural"):
            out.append(f"structural = {_q(e['structural'])}")
        if e.get("survivors"):
            out.append("survivors = [" + ", ".join(_q(s) for s in e["survivors"]) + "]")
        out.append("")
    return "\n".join(out)


class Manifests:
    """Every revision's manifest of one checkout, as loaded; ids as cited (``qualify``)."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self.entries: dict[str, list[dict[str, Any]]] = {r: load(manifest_path(r, root)) for r in REVISIONS}
        self._index()

    def _index(self) -> None:
        self.by_id: dict[str, dict[str, Any]] = {
            qualify(rev, e["id"]): e for rev, entries in self.entries.items() for e in entries
        }

    def ids(self, revision: str) -> list[str]:
        return [qualify(revision, e["id"]) for e in self.entries[revision]]

    def target(self, rid: str) -> str:
        """The id whose code realises ``rid``: its ``same_as``, else itself."""
        same = self.by_id[rid].get("same_as")
        return canonical(same) if same else rid

    def aliases(self, rid: str) -> list[str]:
        """The ids that are ``same_as`` this one."""
        return [a for a, e in self.by_id.items() if e.get("same_as") and canonical(e["same_as"]) == rid]

    def same_as_problem(self, rid: str, same_as: str) -> str | None:
        """Why ``rid`` cannot be ``same_as`` that id, or None."""
        if ID_RE.fullmatch(same_as) is None or ":" not in same_as:
            return f"same_as {same_as!r}: write a full id with its revision, e.g. 2025-11-25:server/tools#5"
        target = canonical(same_as)
        if target == rid:
            return f"{rid} cannot be same_as itself"
        if target not in self.by_id:
            return f"same_as {same_as}: no such id"
        if self.by_id[target].get("same_as"):
            return f"same_as {same_as}: that is same_as {self.by_id[target]['same_as']} itself; name that one"
        return None

    def save(self, revision: str) -> None:
        path = manifest_path(revision, self.root)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".requirements.", suffix=".toml")
        with os.fdopen(fd, "w") as f:
            f.write(dump(self.entries[revision], revision))
        os.replace(tmp, path)
        self._index()


def revision_arg(value: str) -> str:
    if value not in REVISIONS:
        raise argparse.ArgumentTypeError(f"{value!r} is not one of {', '.join(REVISIONS)}")
    return value


def resolve_arg(rid: str, revision: str | None) -> str:
    """An id from the command line, as cited: a prefix names its revision, else ``--revision``
    (default 2025-11-25). A prefix that contradicts ``--revision`` is refused."""
    prefixed, sep, local = rid.partition(":")
    if not sep:
        return qualify(revision or DEFAULT_REVISION, rid)
    if revision is not None and prefixed != revision:
        raise SystemExit(f"{rid} is not of --revision {revision}")
    return qualify(prefixed, local)


@contextlib.contextmanager
def locked(root: Path = ROOT) -> Iterator[None]:
    """One lock for every manifest of the checkout (``set`` may write several)."""
    lock_path = manifest_path(DEFAULT_REVISION, root).with_suffix(".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _root(args: argparse.Namespace) -> Path:
    return Path(args.root).resolve() if getattr(args, "root", None) else ROOT


# -- init: a manifest from its catalogue, inheriting by fingerprint ------------------------------------


def _nearest(text: str, rows: list[dict[str, str]]) -> tuple[float, dict[str, str] | None]:
    """The row whose text is most like ``text`` (difflib's ratio), and the ratio."""
    best: tuple[float, dict[str, str] | None] = (0.0, None)
    for row in rows:
        matcher = difflib.SequenceMatcher(None, text, row["text"], autojunk=False)
        if matcher.real_quick_ratio() <= best[0] or matcher.quick_ratio() <= best[0]:
            continue
        ratio = matcher.ratio()
        if ratio > best[0]:
            best = (ratio, row)
    return best


#: the statuses a statement of identical text inherits (a divergence, or a plan, is decided anew)
INHERITED = ("implemented", "not-applicable")
#: how alike (difflib's ratio) a statement must be to an inherited one for ``init`` to name it
ALIKE = 0.75


def new_entry(
    revision: str, row: dict[str, str], book: Manifests, bases: list[tuple[str, list[dict[str, str]]]]
) -> dict[str, Any]:
    """The entry ``init`` writes for a statement the manifest lacks: ``same_as`` the first
    base revision's statement of identical text (by fingerprint) where that one is
    implemented or not-applicable, marked ``reviewed = false``; else ``planned``, its note
    naming the nearest statement of the bases, if any is alike."""
    local, chapter = row["id"], chapter_of(row["id"])
    for base, rows in bases:
        same = [r for r in rows if r["fingerprint"] == row["fingerprint"]]
        same.sort(key=lambda r: (r["id"] != local, chapter_of(r["id"]) != chapter))
        for other in same:
            matched = qualify(base, other["id"])
            if matched not in book.by_id:
                continue
            target = book.target(matched)
            status = book.by_id[target]["status"]
            if status in INHERITED:
                entry = {"id": local, "status": status, "same_as": written(target), "reviewed": False}
                # through an entry that is same_as another: its text is the matched one's, and why
                # the target realises it too is that entry's note
                why = book.by_id[matched].get("note", "") if matched != target else ""
                note = f"same text as {written(matched)}" + (f"; {why}" if why else "") if matched != target else ""
                return {**entry, "symbols": [], "note": note}
            return {
                "id": local,
                "status": "planned",
                "symbols": [],
                "note": f"{chapter}: same text as {written(target)}, {status} there",
            }
    base_rows = [(base, r) for base, rows in bases for r in rows]
    ratio, near = _nearest(row["text"], [r for _, r in base_rows])
    if near is not None and ratio >= ALIKE:
        base = next(b for b, r in base_rows if r is near)
        like = qualify(base, near["id"])
        status = book.by_id[book.target(like)]["status"] if like in book.by_id else "absent"
        note = f"{chapter}: reworded from {written(like)} ({status} there)"
    else:
        note = f"{chapter}: new in {revision}"
    return {"id": local, "status": "planned", "symbols": [], "note": note}


def cmd_init(args: argparse.Namespace) -> int:
    root = _root(args)
    revision = args.revision or DEFAULT_REVISION
    path = catalogue_path(revision, root)
    if path is None:
        print(catalogue_missing(revision, root), file=sys.stderr)
        return 2
    rows = catalogue_rows(path)
    bases: list[tuple[str, list[dict[str, str]]]] = []
    for base in args.inherit or []:
        base_path = catalogue_path(base, root)
        if base_path is None:
            print(catalogue_missing(base, root), file=sys.stderr)
            return 2
        bases.append((base, catalogue_rows(base_path)))
    with locked(root):
        book = Manifests(root)
        existing = {e["id"]: e for e in book.entries[revision]}
        entries = [existing.get(row["id"]) or new_entry(revision, row, book, bases) for row in rows]
        made = sum(row["id"] not in existing for row in rows)
        inherited = sum(row["id"] not in existing and bool(e.get("same_as")) for row, e in zip(rows, entries))
        dropped = sorted(set(existing) - {e["id"] for e in entries})
        book.entries[revision] = entries
        book.save(revision)
    print(
        f"{revision}: {len(entries)} requirements, {made} new ({inherited} same_as by fingerprint, "
        f"{made - inherited} planned); {len(dropped)} dropped (no longer in the catalogue): {dropped}"
    )
    return 0


# -- set ---------------------------------------------------------------------------------------------

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
    root = _root(args)
    ids = [resolve_arg(i, args.revision) for i in args.ids]
    with locked(root):
        book = Manifests(root)
        missing = [i for i in ids if i not in book.by_id]
        if missing:
            print("unknown ids: " + ", ".join(i + suggest_in(i, book) for i in missing), file=sys.stderr)
            return 2
        changed: set[str] = set()
        for rid in ids:
            problem = _set_one(book, rid, args)
            if problem:
                print(problem, file=sys.stderr)
                return 2
            changed.add(split_id(rid)[0])
            # who is same_as it follows its status
            for alias in book.aliases(rid):
                if book.by_id[alias]["status"] != book.by_id[rid]["status"]:
                    book.by_id[alias]["status"] = book.by_id[rid]["status"]
                    changed.add(split_id(alias)[0])
                    print(f"{alias} (same_as {rid}): {book.by_id[alias]['status']}")
        for revision in REVISIONS:
            if revision in changed:
                book.save(revision)
    return 0


def _set_one(book: Manifests, rid: str, args: argparse.Namespace) -> str | None:
    """Apply the options to one entry; what is wrong, if anything (then nothing is saved)."""
    e = book.by_id[rid]
    if args.same_as is not None:
        if args.same_as:
            problem = book.same_as_problem(rid, args.same_as)
            if problem:
                return problem
            if book.aliases(rid):
                return f"{rid} cannot be same_as another id: {', '.join(book.aliases(rid))} are same_as it"
            e["same_as"] = written(canonical(args.same_as))
        else:
            e.pop("same_as", None)
            e.pop("reviewed", None)
    if e.get("same_as"):
        status = book.by_id[book.target(rid)]["status"]
        if args.status is not None and args.status != status:
            return (
                f"{rid} is same_as {e['same_as']} ({status}): set the status there, "
                f"or detach it first (--same-as '' --status {args.status})"
            )
        e["status"] = status
        if args.reviewed:
            e.pop("reviewed", None)
    elif args.reviewed:
        return f"{rid} is no same_as: --reviewed is for those"
    else:
        e["status"] = args.status or e["status"]
    note = args.note if args.note is not None else e.get("note", "")
    if e["status"] in ("divergent", "not-applicable") and not note and not e.get("same_as"):
        return f"a {e['status']} requirement needs --note ({rid})"
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
    return None


# -- coverage and list ---------------------------------------------------------------------------------


def counts(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """chapter -> status -> how many; also ``same_as`` and ``unreviewed`` per chapter."""
    table: dict[str, dict[str, int]] = {}
    for e in entries:
        row = table.setdefault(chapter_of(e["id"]), dict.fromkeys((*STATUSES, "same_as", "unreviewed"), 0))
        row[e["status"]] += 1
        row["same_as"] += bool(e.get("same_as"))
        row["unreviewed"] += e.get("reviewed") is False
    return table


def total_line(entries: list[dict[str, Any]]) -> str:
    tot = {s: sum(e["status"] == s for e in entries) for s in STATUSES}
    line = (
        f"total: {tot['implemented']} implemented, {tot['divergent']} divergent, "
        f"{tot['not-applicable']} not-applicable, {tot['planned']} planned of {len(entries)}"
    )
    same = sum(bool(e.get("same_as")) for e in entries)
    if same:
        line += f" ({same} same_as, {sum(e.get('reviewed') is False for e in entries)} of them unreviewed)"
    return line


def cmd_coverage(args: argparse.Namespace) -> int:
    root = _root(args)
    book = Manifests(root)
    revisions = args.revision or [r for r in REVISIONS if book.entries[r]]
    for n, revision in enumerate(revisions):
        entries = book.entries[revision]
        table = counts(entries)
        if n:
            print()
        print(f"== {revision} ({manifest_path(revision, root).relative_to(root)})")
        width = max([len("chapter"), *map(len, table)])
        print(f"{'chapter':<{width}}  {'impl':>5} {'div':>4} {'n/a':>4} {'plan':>5} {'total':>6}  {'same_as':>7}")
        for chapter in sorted(table):
            r = table[chapter]
            print(
                f"{chapter:<{width}}  {r['implemented']:>5} {r['divergent']:>4} {r['not-applicable']:>4}"
                f" {r['planned']:>5} {sum(r[s] for s in STATUSES):>6}  {r['same_as'] or '':>7}"
            )
        print(total_line(entries))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    book = Manifests(_root(args))
    for revision in args.revision or REVISIONS:
        for e in book.entries[revision]:
            if args.status and e["status"] != args.status:
                continue
            if args.chapter and chapter_of(e["id"]) != args.chapter:
                continue
            if args.unreviewed and e.get("reviewed") is not False:
                continue
            rid = qualify(revision, e["id"])
            status = e["status"] + (f" = {e['same_as']}" if e.get("same_as") else "")
            print(f"{rid:<40} {status:<15} {e.get('note', '')}".rstrip())
    return 0


# -- citations in code -------------------------------------------------------------------------

_ITEM = rf"(?:(?:(?:{_REV}):)?{_CHAPTER})?#\d+(?:\s*-\s*#?\d+)?"
CITATION_RE = re.compile(rf"\[({_ITEM}(?:\s*,\s*{_ITEM})*)\]")
_ITEM_RE = re.compile(rf"\s*(?:(?:({_REV}):)?({_CHAPTER}))?#(\d+)(?:\s*-\s*#?(\d+))?\s*")


def cited_in(text: str) -> list[str]:
    """The requirement ids a piece of text cites, in order, as ``qualify`` writes them.

    ``[a/b#3]``; ``[a/b#3, #5]`` (a bare ``#N`` keeps the chapter and revision before
    it, also from an earlier group of the same comment or docstring: ``[a/b#3] ...
    [#5]``); ``[a/b#9-#11]`` (a range); ``[a/b#3, c#7]``; ``[2026-07-28:a/b#3, c#7]``
    (a revision prefix holds for the rest of its group). A section anchor such as
    ``[a/b#some-section]`` is no id.
    """
    ids: list[str] = []
    chapter = ""
    revision = DEFAULT_REVISION
    for m in CITATION_RE.finditer(text):
        group_revision: str | None = None
        for item in m.group(1).split(","):
            im = _ITEM_RE.fullmatch(item)
            if im is None:  # the outer pattern admits only items
                raise AssertionError(item)
            if im.group(2):
                group_revision = im.group(1) or group_revision
                revision = group_revision or DEFAULT_REVISION
                chapter = im.group(2)
            if not chapter:  # a bare [#N] with no chapter before it names nothing
                break
            lo = int(im.group(3))
            hi = int(im.group(4) or lo)
            ids.extend(qualify(revision, f"{chapter}#{n}") for n in range(lo, max(lo, hi) + 1))
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
            ids.extend(canonical(a.value) for a in d.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
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
        found: dict[str, list[str]] = {}
        for rid, nodes in json.loads(out.read_text()).items():  # (markers as written: 2025-11-25:a#1 is a#1)
            found.setdefault(canonical(rid), []).extend(n for n in nodes if n not in found.get(canonical(rid), []))
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


def suggest_in(rid: str, book: Manifests) -> str:
    """``suggest`` among the ids of ``rid``'s revision; the suggestions as cited."""
    revision, local = split_id(rid)
    hint = suggest(local, (e["id"] for e in book.entries[revision]))
    if not hint or revision == DEFAULT_REVISION:
        return hint
    return re.sub(rf"({_CHAPTER}#\d+)", rf"{revision}:\1", hint)


def select_ids(book: Manifests, args: argparse.Namespace) -> list[str]:
    status = args.status or "implemented"
    revision = args.revision or DEFAULT_REVISION
    if args.ids:
        chosen = [resolve_arg(i, args.revision) for i in args.ids]
        unknown = [i for i in chosen if i not in book.by_id]
        if unknown:
            raise SystemExit("unknown ids: " + ", ".join(i + suggest_in(i, book) for i in unknown))
    else:
        chosen = [rid for rid in book.ids(revision) if book.by_id[book.target(rid)]["status"] == status]
    if args.chapter:
        chosen = [
            i for i in chosen if any(chapter_of(i) == c or chapter_of(i).startswith(c + "/") for c in args.chapter)
        ]
    if args.own:  # (a same_as id is mutated where its target is: sampling the target covers it)
        chosen = [i for i in chosen if not book.by_id[i].get("same_as")]
    if args.sample is not None and args.sample < len(chosen):
        chosen = sorted(random.Random(args.seed).sample(sorted(chosen), args.sample), key=chosen.index)
    return chosen


def _ratio(killed: int, total: int) -> str:
    return f"{100.0 * killed / total:.1f} %" if total else "n/a"


def cmd_mutate(args: argparse.Namespace) -> int:
    root = _root(args)
    book = Manifests(root)
    ids = select_ids(book, args)
    cites = citations_by_id(citations(root))
    log = sys.stderr if args.json else sys.stdout

    plan: dict[str, dict[str, Any]] = {}
    mutants: dict[str, list[Mutant]] = {}
    accepted: dict[str, list[str]] = {}
    for rid in ids:
        # a same_as id is enforced where its target is: break those lines (and any of its own)
        target = book.target(rid)
        entry = book.by_id[target]
        own = book.by_id[rid]
        info: dict[str, Any] = {"id": rid, "status": "mutated", "tests": [], "notes": []}
        if target != rid:
            info["same_as"] = target
        plan[rid] = info
        accepted[rid] = [*entry.get("survivors", []), *(own.get("survivors", []) if target != rid else [])]
        lines = [*cites.get(target, []), *(cites.get(rid, []) if target != rid else [])]
        if not lines:
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
        muts, notes = mutants_for(root, lines)
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
        return _mutate(args, ids, plan, mutants, scratches, accepted, log)
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
    accepted: dict[str, list[str]],
    log: Any,
) -> int:
    root = _root(args)
    # the tests citing each id: as pytest collects them (markers set dynamically, e.g. on
    # parametrized cases, included), else as the markers read in the source say
    tests = scratches[0].collect_citing() if scratches else None
    if tests is None:
        tests = citing_tests(root)
    jobs: list[tuple[str, Mutant]] = []
    for rid, muts in mutants.items():
        info = plan[rid]
        # the tests citing the id, or its same_as target
        info["tests"] = list(dict.fromkeys([*tests.get(info.get("same_as", rid), []), *tests.get(rid, [])]))
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
            o.accepted = {survivor_key(s): s for s in accepted[o.rid]}.get(o.mutant.key)
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
            line = f"{rid}{' (same_as ' + info['same_as'] + ')' if info.get('same_as') else ''}: "
            line += f"{len(outs)} mutants, {k} killed, {len(lived)} survived"
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


def _statement(rid: str, root: Path) -> list[str]:
    """The catalogue's row of an id, as ``show`` prints it."""
    revision, local = split_id(rid)
    path = catalogue_path(revision, root)
    if path is None:
        return [f"  (statement not shown: {catalogue_missing(revision, root)})"]
    row = next((r for r in catalogue_rows(path) if r["id"] == local), None)
    if row is None:
        return ["  (not in the catalogue)"]
    return [
        f"  level: {row['keyword']}   party: {row['party']}   {revision}/{row['file']}:{row['line']}  {row['section']}",
        textwrap.indent(textwrap.fill(row["text"], 100), "  | "),
    ]


def cmd_show(args: argparse.Namespace) -> int:
    root = _root(args)
    book = Manifests(root)
    rid = resolve_arg(args.id, args.revision)
    if rid not in book.by_id:
        print(f"unknown id {rid}{suggest_in(rid, book)}", file=sys.stderr)
        return 2
    entry = book.by_id[rid]
    target = book.target(rid)
    print(rid)
    print("\n".join(_statement(rid, root)))
    print(f"status: {entry['status']}")
    if target != rid:
        review = "  (not yet reviewed: set --reviewed once the code path is checked)"
        print(f"same_as: {entry['same_as']}{review if entry.get('reviewed') is False else ''}")
        print("\n".join(_statement(target, root)))
        print(f"  its note: {book.by_id[target].get('note') or '-'}")
    print(f"symbols: {', '.join(entry.get('symbols', [])) or '-'}")
    print(f"note: {entry.get('note') or '-'}")
    if book.by_id[target].get("structural"):
        print(f"structural: {book.by_id[target]['structural']}")
    for s in [*book.by_id[target].get("survivors", []), *(entry.get("survivors", []) if target != rid else [])]:
        print(f"accepted survivor: {s}")
    by_id = citations_by_id(citations(root))
    cites = [*by_id.get(target, []), *(by_id.get(rid, []) if target != rid else [])]
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
        where = f"-> {at}: {lines[at - 1].strip()[:80]}" if stmt else "-> (no statement)"
        print(f"  {c.path}:{c.line}  {c.text[:110]}")
        print(f"      {where}")
    cited = citing_tests(root)
    tests = list(dict.fromkeys([*cited.get(target, []), *cited.get(rid, [])]))
    print(f"citing tests ({len(tests)}):")
    for t in tests:
        print(f"  {t}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def command(name: str, fn: Any, **kwargs: Any) -> argparse.ArgumentParser:
        s = sub.add_parser(name, **kwargs)
        s.add_argument("--root", help=argparse.SUPPRESS)
        s.set_defaults(fn=fn)
        return s

    one: dict[str, Any] = {"type": revision_arg, "help": f"the revision of unprefixed ids (default {DEFAULT_REVISION})"}
    s = command("init", cmd_init, help="create or refresh a revision's manifest from its catalogue")
    s.add_argument("--revision", **one)
    s.add_argument(
        "--inherit",
        action="append",
        type=revision_arg,
        metavar="REV",
        help="a new statement with the text of one of REV's (in the order given) is same_as it (repeatable)",
    )
    s = command("set", cmd_set, help="change entries")
    s.add_argument("ids", nargs="+")
    s.add_argument("--revision", **one)
    s.add_argument("--status")
    s.add_argument("--symbols")
    s.add_argument("--note")
    s.add_argument("--same-as", help="the id (with its revision) whose code realises it too ('' detaches it)")
    s.add_argument("--reviewed", action="store_true", help="a same_as checked against the code")
    s.add_argument("--structural", help="why no single line enforces it ('' removes it)")
    s.add_argument("--survivor", action="append", help="'KEY -- why' a mutant may survive (repeatable)")
    s.add_argument("--clear-survivors", action="store_true")
    many: dict[str, Any] = {
        "action": "append",
        "type": revision_arg,
        "help": "only this revision (repeatable; default: all)",
    }
    s = command("coverage", cmd_coverage, help="a chapter x status table per revision")
    s.add_argument("--revision", **many)
    s = command("show", cmd_show, help="one id: statement, entry, enforcing lines, citing tests")
    s.add_argument("id")
    s.add_argument("--revision", **one)
    s = command("list", cmd_list, help="the entries, one a line")
    s.add_argument("--revision", **many)
    s.add_argument("--status")
    s.add_argument("--chapter")
    s.add_argument("--unreviewed", action="store_true", help="only same_as entries not yet reviewed")
    s = command("mutate", cmd_mutate, help="break the lines citing each id; run the tests citing it")
    s.add_argument("ids", nargs="*")
    s.add_argument("--revision", **one)
    s.add_argument("--chapter", action="append", help="a chapter or a chapter prefix (repeatable)")
    s.add_argument("--status", help="ids of this status when none are given (default implemented)")
    s.add_argument("--own", action="store_true", help="leave out same_as ids (their target's lines are another's)")
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
