"""``mcp-ref explain ID``: what a requirement id of any revision (or of the tasks extension) asks.

An id names a statement of one catalogue (``<spec>/<revision>/requirements.tsv``,
``<spec>/ext-tasks/requirements.tsv``). Written with its revision
(``2026-07-28:basic/patterns/mrtr#4``, ``ext-tasks:tasks#2``) it names that one;
without, it means 2025-11-25's (COORDINATION.md), or -- when 2025-11-25 has no such
statement -- the newest revision (then the extension) that has it, and the answer
says which. What is printed comes from three places, each used when present:

* our own words and level, for the ids the cross-checker reports
  (:mod:`.rules`; they travel with the package);
* the catalogue: the level, who it binds, the section and the spec's sentence
  (the spec checkout: ``$MCP_SPEC_DIR``, or ``../shared/spec`` beside the
  repository, as ``tools/manifest.py`` looks for it);
* mcp_ref's manifest of that revision (``spec_notes/.../requirements.toml`` in a
  checkout of the repository): the status, our note, the code that implements it.

The link goes to the section on modelcontextprotocol.io. An id none of them
knows is a :class:`KeyError` naming the ids of that chapter there are.
"""

import csv
import os
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Final

import attrs

from ..schema._base import REVISIONS
from .rules import CHECK_RULES, rule
from .sections import SECTIONS, SITE, anchor

__all__ = ["Explained", "explain", "explain_text", "EXTENSIONS", "EXTENSION_PAGES"]

#: catalogues that are not revisions of the core protocol
EXTENSIONS: Final = ("ext-tasks",)
#: where each extension's prose is published (its catalogue's ``tasks.mdx`` is that page)
EXTENSION_PAGES: Final = {
    "ext-tasks": "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md",
}
#: what to do when the catalogues are not at hand
NO_CATALOGUE: Final = (
    "no spec catalogue at hand, so no level, sentence or section: set MCP_SPEC_DIR to the spec's "
    "folder (the one with <revision>/requirements.tsv), or run `make spec` in a checkout of mcp_ref"
)
#: where an unprefixed id is looked for, in order: the default revision first, then the newest
_ORDER: Final = ("2025-11-25", *reversed([r for r in REVISIONS if r != "2025-11-25"]), *EXTENSIONS)
_ROOT: Final = Path(__file__).resolve().parents[2]


@attrs.frozen
class Explained:
    """What is known about one requirement id."""

    id: str  # as the reports write it: no prefix for 2025-11-25
    revision: str
    local: str
    level: str | None = None
    party: str | None = None
    file: str | None = None
    section: str | None = None
    text: str | None = None
    ours: str | None = None  # our words, for an id the cross-checker reports
    judged_as: str | None = None
    status: str | None = None
    note: str | None = None
    symbols: tuple[str, ...] = ()
    same_as: str | None = None
    #: the id written without a revision resolved to another revision than 2025-11-25
    resolved_from: str | None = None

    @property
    def link(self) -> str:
        """The section's address (without the catalogue: the chapter's page, which the id names)."""
        target = anchor(self.file, self.section) if self.file is not None and self.section is not None else ""
        if self.revision in EXTENSIONS:
            return EXTENSION_PAGES[self.revision] + (f"#{target}" if target else "")
        if self.file is not None:
            page = "schema" if self.file.endswith(".ts") else self.file.removesuffix(".mdx")
        else:
            page = self.local.split("#", 1)[0]
        page = page.removesuffix("/index")
        page = "" if page == "index" else page
        url = f"{SITE}/{self.revision}" + (f"/{page}" if page else "")
        return url + (f"#{target}" if target else "")


def _spec_dirs() -> tuple[Path, ...]:
    chosen = os.environ.get("MCP_SPEC_DIR")
    if chosen:
        return (Path(chosen),)
    shared = Path(os.environ.get("MCP_REF_SHARED") or _ROOT.parent / "shared")
    return (shared / "spec", _ROOT / "spec")


@cache
def _catalogue(revision: str) -> dict[str, dict[str, str]]:
    """The catalogue of ``revision`` by id (empty without the spec checkout)."""
    for folder in _spec_dirs():
        path = folder / revision / "requirements.tsv"
        if path.exists():
            with path.open(encoding="utf-8", newline="") as f:
                return {row["id"]: row for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)}
    return {}


@cache
def _manifest(revision: str) -> dict[str, dict[str, Any]]:
    """mcp_ref's manifest of ``revision`` by id (empty outside a checkout of the repository)."""
    folder = _ROOT / "spec_notes"
    path = folder / "requirements.toml" if revision == "2025-11-25" else folder / revision / "requirements.toml"
    if not path.exists():
        return {}
    with path.open("rb") as f:
        return {entry["id"]: entry for entry in tomllib.load(f).get("requirement", [])}


def _split(requirement: str) -> tuple[str | None, str]:
    revision, sep, local = requirement.partition(":")
    if sep and (revision in REVISIONS or revision in EXTENSIONS):
        return revision, local
    return None, requirement


def _written(revision: str, local: str) -> str:
    return local if revision == "2025-11-25" else f"{revision}:{local}"


def _ours(revision: str, local: str) -> Any:
    try:
        return rule(_written(revision, local))
    except KeyError:
        return None


def _known(revision: str, local: str) -> bool:
    written = _written(revision, local)
    return (
        local in _catalogue(revision)
        or local in _manifest(revision)
        or written in SECTIONS
        or written in CHECK_RULES
        or _ours(revision, local) is not None
    )


def _candidates(requirement: str) -> Iterator[tuple[str, str]]:
    revision, local = _split(requirement)
    if revision is not None:
        yield revision, local
        return
    for revision in _ORDER:
        yield revision, local


def explain(requirement: str) -> Explained:
    """Everything known about ``requirement``; KeyError when no catalogue, manifest or table has it."""
    revision, _ = _split(requirement)
    for rev, local in _candidates(requirement.strip()):
        if not _known(rev, local):
            continue
        row = _catalogue(rev).get(local, {})
        entry = _manifest(rev).get(local, {})
        ours = _ours(rev, local)
        where = SECTIONS.get(_written(rev, local))
        return Explained(
            id=_written(rev, local),
            revision=rev,
            local=local,
            level=row.get("keyword") or (ours.level if ours is not None else None),
            party=row.get("party") or None,
            file=row.get("file") or (where[0] if where else None),
            section=row.get("section") or (where[1] if where else None),
            text=row.get("text") or None,
            ours=ours.what if ours is not None else None,
            judged_as=ours.judged_as if ours is not None else None,
            status=entry.get("status"),
            note=entry.get("note") or None,
            symbols=tuple(entry.get("symbols") or ()),
            same_as=entry.get("same_as") or None,
            resolved_from=requirement if revision is None and rev != "2025-11-25" else None,
        )
    raise KeyError(_unknown(requirement))


def _unknown(requirement: str) -> str:
    revision, local = _split(requirement)
    chapter = local.split("#", 1)[0]
    close: list[str] = []
    for rev in [revision] if revision is not None else list(_ORDER):
        ids = set(_catalogue(rev)) | set(_manifest(rev))
        mine = sorted((i for i in ids if i.split("#", 1)[0] == chapter), key=_number)
        close += [_written(rev, i) for i in mine]
        if close:
            break
    hint = f" (of that chapter: {', '.join(close[:12])}{', ...' if len(close) > 12 else ''})" if close else ""
    return f"{requirement!r} is not a requirement of any catalogue mcp-ref knows{hint}"


def _number(local: str) -> tuple[str, int]:
    chapter, _, n = local.partition("#")
    return chapter, int(n) if n.isdigit() else 0


def explain_text(requirement: str) -> str:
    """What ``mcp-ref explain`` prints for one id; KeyError for an id nobody knows."""
    e = explain(requirement)
    level = e.judged_as or e.level or "level not known"
    lines = [f"{e.id} ({level}{', ' + e.party if e.party else ''})"]
    if not _catalogue(e.revision):
        lines.append(f"  ({NO_CATALOGUE})")
    if e.resolved_from is not None:
        whose = "the tasks extension's" if e.revision == "ext-tasks" else f"revision {e.revision}'s"
        lines.append(f"  (2025-11-25 has no {e.resolved_from}: this is {whose})")
    if e.ours is not None:
        lines.append(f"  our note: {e.ours}")
    if e.judged_as:
        lines.append(f"  (the catalogue says {e.level}; judged as {e.judged_as}: see spec_notes/crosscheck.md)")
    if e.text is not None:
        lines.append(f"  the spec: {e.text}")
    if e.status is not None:
        status = e.status + (f" (same as {e.same_as})" if e.same_as else "")
        lines.append(f"  mcp_ref:  {status}" + (f" -- {e.note}" if e.note else ""))
        if e.symbols:
            lines.append(f"  code:     {', '.join(e.symbols)}")
    if e.file is not None and e.section is not None:
        lines.append(f"  section:  {e.file.removesuffix('.mdx')}: {e.section}")
    lines.append(f"  link:     {e.link}")
    return "\n".join(lines) + "\n"
