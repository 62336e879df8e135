#!/usr/bin/env python3
"""Fetch the MCP specification the tests read into ``spec/`` and make its catalogues (``make spec``).

For users who cloned mcp_ref alone: the team keeps the spec in ``../shared/spec``
beside the checkout, and the tests that need it skip without it. This brings every
revision mcp_ref speaks -- 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and
2026-07-28 from the specification repository, and the tasks extension (``ext-tasks``)
from its own repository, each at one pinned commit -- into a git-ignored folder laid
out as ``../shared/spec``:

- ``<revision>/schema.json``, ``<revision>/schema.ts``, the prose (``<revision>/**/*.mdx``),
  ``<revision>/schema.mdx`` where there is one, and 2026-07-28's JSON ``examples/``;
- ``ext-tasks/tasks.mdx`` (the extension's prose), its ``schema.json``, ``schema.ts``,
  ``spec.types.ts``, ``spec.schema.json`` and the SEP.

Then it writes mcp_ref's own catalogues beside them with ``tools/extract_requirements.py``:
``<revision>/requirements.tsv`` (every normative statement with its id) for all six,
``methods.tsv`` for 2025-11-25 and 2026-07-28. They are byte for byte the team's
(``tests/test_fetch_spec.py`` checks it wherever ``../shared/spec`` is present).
Standard library only.

    python3 tools/fetch_spec.py                     # from GitHub, into spec/
    python3 tools/fetch_spec.py --source ../modelcontextprotocol --tasks-source ../ext-tasks   # local clones
"""

import argparse
import dataclasses
import importlib.util
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path, PurePosixPath
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Upstream:
    """One repository the spec comes from, at the commit the tests judge against."""

    repository: str
    #: bump it deliberately: the tests (and the catalogues' ids) are judged against it
    commit: str
    #: what ``git archive`` of a local clone takes
    paths: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"https://codeload.github.com/{self.repository}/tar.gz/{self.commit}"


SPEC = Upstream(
    "modelcontextprotocol/modelcontextprotocol",
    "b0f60ba5409db7a6582440a7b473cc0398890f15",
    ("schema", "docs/specification"),
)
TASKS = Upstream(
    "modelcontextprotocol/ext-tasks",
    "e4345978be1f602f1fc48d89051e8559dd5302a6",
    ("schema/draft", "specification/draft", "seps"),
)
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
EXTENSION = "ext-tasks"
#: the revisions whose methods.tsv is kept (as in ../shared/spec)
METHOD_TABLES = ("2025-11-25", "2026-07-28")
#: the revisions whose ``schema.mdx`` is the skeleton page of ``schema/<revision>/`` rather than
#: the generated reference of ``docs/specification/<revision>/``: its statements come from
#: schema.ts's doc comments instead (tools/extract_requirements.py), as in the team's copy
SCHEMA_SKELETON = ("2026-07-28",)
#: what each folder must have once fetched (else the source is not the repository it should be)
REQUIRED = {
    **{rev: ("schema.json", "schema.ts", "index.mdx", "basic/lifecycle.mdx") for rev in REVISIONS[:-1]},
    "2026-07-28": ("schema.json", "schema.ts", "index.mdx", "basic/versioning.mdx", "schema.mdx"),
    EXTENSION: ("tasks.mdx", "schema.json", "schema.ts"),
}
#: the extension's files: where the ext-tasks repository keeps them -> the name in ext-tasks/
TASK_FILES = {
    "specification/draft/tasks.md": "tasks.mdx",
    "schema/draft/schema.json": "schema.json",
    "schema/draft/schema.ts": "schema.ts",
    "schema/draft/spec.schema.json": "spec.schema.json",
    "schema/draft/spec.types.ts": "spec.types.ts",
    "seps/2663-tasks-extension.md": "sep-2663-tasks-extension.md",
}

_REV = "|".join(map(re.escape, REVISIONS))
_NAME = r"(?:[\w.-]+/)*[\w.-]+"
_SCHEMA = re.compile(rf"schema/(?P<rev>{_REV})/(?P<name>schema\.(?:json|ts|mdx)|examples/{_NAME}\.json)")
_PROSE = re.compile(rf"docs/specification/(?P<rev>{_REV})/(?P<name>{_NAME}\.mdx)")


class FetchError(Exception):
    """The source could not be read, or is not the repository it should be."""


def destination(path: str, upstream: Upstream = SPEC) -> PurePosixPath | None:
    """Where ``path`` (relative to ``upstream``'s root) goes under the spec folder, or None."""
    if upstream is TASKS:
        name = TASK_FILES.get(path)
        return PurePosixPath(EXTENSION, name) if name else None
    for pattern in (_SCHEMA, _PROSE):
        m = pattern.fullmatch(path)
        if m is None or ".." in m["name"].split("/"):
            continue
        if m["name"] == "schema.mdx" and (pattern is _SCHEMA) != (m["rev"] in SCHEMA_SKELETON):
            return None  # (the other of the two schema.mdx pages)
        return PurePosixPath(m["rev"], m["name"])
    return None


def extract(archive: tarfile.TarFile, dest: Path, upstream: Upstream = SPEC) -> int:
    """Write the wanted files of ``archive`` (one top-level folder, as GitHub and ``git archive
    --prefix`` make them) under ``dest``; returns how many."""
    count = 0
    for member in archive:
        if not member.isfile():
            continue
        _, _, inside = member.name.partition("/")
        target = destination(inside, upstream)
        if target is None:
            continue
        data = archive.extractfile(member)
        assert data is not None  # (a regular file)
        path = dest.joinpath(*target.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.read())
        count += 1
    return count


def read_archive(source: str, upstream: Upstream, commit: str) -> bytes:
    """The tar archive of ``commit``: from a local git repository (a clone or a mirror), or a URL."""
    if Path(source).exists():
        try:
            return subprocess.run(
                ["git", "-C", source, "archive", "--format=tar", "--prefix=spec/", commit, *upstream.paths],
                check=True,
                capture_output=True,
            ).stdout
        except subprocess.CalledProcessError as e:
            raise FetchError(f"git archive of {commit} in {source} failed: {e.stderr.decode().strip()}") from None
    try:
        with urllib.request.urlopen(source, timeout=60) as response:
            return bytes(response.read())
    except OSError as e:
        raise FetchError(f"cannot download {source}: {e}") from None


def extractor() -> ModuleType:
    """tools/extract_requirements.py, the catalogue script (a script, not a package)."""
    name = "mcp_ref_extract_requirements_tool"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("extract_requirements.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def catalogues(folder: Path) -> dict[str, int]:
    """Write requirements.tsv into every revision's folder under ``folder`` (and methods.tsv
    where kept); returns the number of statements per folder."""
    tool = extractor()
    made: dict[str, int] = {}
    for name in (*REVISIONS, EXTENSION):
        version_dir = folder / name
        rows = tool.requirement_rows(str(version_dir))
        tool.write_tsv(str(version_dir / "requirements.tsv"), tool.REQ_COLUMNS, rows)
        made[name] = len(rows)
        if name in METHOD_TABLES:
            tool.write_tsv(str(version_dir / "methods.tsv"), tool.METHOD_COLUMNS, tool.method_rows(str(version_dir)))
    return made


@dataclasses.dataclass(frozen=True)
class Source:
    """Where one upstream is read from this time: a tar.gz URL or a local git repository."""

    upstream: Upstream
    location: str
    commit: str


def fetch(dest: Path, sources: tuple[Source, ...] | None = None) -> dict[str, int]:
    """Replace ``dest`` with the spec files and their catalogues; returns the statements per
    folder. Written beside it first, so an interrupted fetch leaves the old folder (or none)."""
    sources = sources or (Source(SPEC, SPEC.url, SPEC.commit), Source(TASKS, TASKS.url, TASKS.commit))
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".spec-", dir=dest.parent))
    try:
        for source in sources:
            data = read_archive(source.location, source.upstream, source.commit)
            try:
                with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                    extract(archive, staging, source.upstream)
            except tarfile.TarError as e:
                raise FetchError(f"{source.location} did not give a tar archive: {e}") from None
        missing = [f"{folder}/{name}" for folder, names in REQUIRED.items() for name in names]
        missing = [m for m in missing if not (staging / m).is_file()]
        if missing:
            where = " and ".join(f"{s.location} at {s.commit}" for s in sources)
            raise FetchError(f"{where} lack {', '.join(missing)}: not the MCP specification repositories?")
        made = catalogues(staging)
        pinned = "\n".join(f"- {s.upstream.repository} at {s.commit}" for s in sources)
        (staging / "README.md").write_text(
            f"Fetched by `make spec` (tools/fetch_spec.py) from\n\n{pinned}\n\n"
            "with requirements.tsv and methods.tsv made by tools/extract_requirements.py.\n"
            "Not part of mcp_ref (git-ignored); delete it freely.\n"
        )
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=ROOT / "spec", help="the folder to fill (default: spec/)")
    parser.add_argument(
        "--source",
        default=SPEC.url,
        help=f"a local git repository of {SPEC.repository}, or a tar.gz URL (default: GitHub)",
    )
    parser.add_argument("--commit", default=SPEC.commit, help="its commit (default: the pinned one)")
    parser.add_argument(
        "--tasks-source",
        default=TASKS.url,
        help=f"a local git repository of {TASKS.repository}, or a tar.gz URL (default: GitHub)",
    )
    parser.add_argument("--tasks-commit", default=TASKS.commit, help="its commit (default: the pinned one)")
    args = parser.parse_args(argv)
    sources = (Source(SPEC, args.source, args.commit), Source(TASKS, args.tasks_source, args.tasks_commit))
    try:
        made = fetch(args.dest, sources)
    except FetchError as e:
        print(f"make spec: {e}", file=sys.stderr)
        return 1
    print(
        f"the spec in {args.dest}: {SPEC.repository} at {args.commit[:12]}, {TASKS.repository} at "
        f"{args.tasks_commit[:12]}; statements catalogued: {', '.join(f'{k} {v}' for k, v in made.items())}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
