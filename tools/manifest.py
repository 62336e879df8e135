#!/usr/bin/env python3
"""The requirement manifest: spec_notes/requirements.toml.

One ``[[requirement]]`` table per id of ../shared/spec/2025-11-25/requirements.tsv,
with our status, the symbols that realise it and a note in our own words.

    tools/manifest.py init                       create / refresh from the catalogue
    tools/manifest.py set ID [ID...] --status S [--symbols a,b] [--note "..."]
    tools/manifest.py coverage                   per-chapter table; last line is the total
    tools/manifest.py show ID
    tools/manifest.py list [--status S] [--chapter C]

Standard library only. Writes are atomic and serialised with a lock file.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import fcntl
import json
import os
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "spec_notes" / "requirements.toml"
CATALOGUE = ROOT.parent / "shared" / "spec" / "2025-11-25" / "requirements.tsv"
STATUSES = ("implemented", "divergent", "not-applicable", "planned")


def chapter_of(req_id: str) -> str:
    return req_id.split("#", 1)[0]


def load(path: Path = MANIFEST) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open("rb") as f:
        return list(tomllib.load(f).get("requirement", []))


def catalogue_ids(path: Path = CATALOGUE) -> list[str]:
    with path.open(newline="") as f:
        return [row["id"] for row in csv.DictReader(f, delimiter="\t")]


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def dump(entries: list[dict[str, Any]]) -> str:
    out = [
        "# mcp_ref requirement manifest: one table per normative statement of the 2025-11-25 spec.",
        "# status: implemented | divergent | not-applicable | planned. Edit with tools/manifest.py.",
        "",
    ]
    for e in entries:
        out.append("[[requirement]]")
        out.append(f"id = {_q(e['id'])}")
        out.append(f"status = {_q(e['status'])}")
        out.append("symbols = [" + ", ".join(_q(s) for s in e.get("symbols", [])) + "]")
        out.append(f"note = {_q(e.get('note', ''))}")
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


def cmd_set(args: argparse.Namespace) -> int:
    if args.status not in STATUSES:
        print(f"status must be one of {STATUSES}", file=sys.stderr)
        return 2
    if args.status in ("divergent", "not-applicable") and not args.note:
        print(f"a {args.status} requirement needs --note", file=sys.stderr)
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
            e["status"] = args.status
            if args.symbols is not None:
                e["symbols"] = [s for s in args.symbols.split(",") if s]
            if args.note is not None:
                e["note"] = args.note
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


def cmd_show(args: argparse.Namespace) -> int:
    for e in load():
        if e["id"] == args.id:
            print(dump([e]))
            return 0
    print(f"unknown id {args.id}", file=sys.stderr)
    return 2


def cmd_list(args: argparse.Namespace) -> int:
    for e in load():
        if args.status and e["status"] != args.status:
            continue
        if args.chapter and chapter_of(e["id"]) != args.chapter:
            continue
        print(f"{e['id']:<40} {e['status']:<15} {e.get('note', '')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("init").set_defaults(fn=cmd_init)
    s = sub.add_parser("set")
    s.add_argument("ids", nargs="+")
    s.add_argument("--status", required=True)
    s.add_argument("--symbols")
    s.add_argument("--note")
    s.set_defaults(fn=cmd_set)
    sub.add_parser("coverage").set_defaults(fn=cmd_coverage)
    s = sub.add_parser("show")
    s.add_argument("id")
    s.set_defaults(fn=cmd_show)
    s = sub.add_parser("list")
    s.add_argument("--status")
    s.add_argument("--chapter")
    s.set_defaults(fn=cmd_list)
    args = p.parse_args(argv)
    return int(args.fn(args))


if __name__ == "__main__":
    sys.exit(main())
