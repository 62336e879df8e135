#!/usr/bin/env python3
"""Fetch the MCP specification that the tests read into ``spec/`` (``make spec``).

For users who cloned mcp_ref alone: the team keeps the spec in ``../shared/spec``
beside the checkout, and the tests that need it skip without it. This brings the
three revisions mcp_ref negotiates (2025-11-25, 2025-06-18, 2025-03-26), each as
``<revision>/schema.json``, ``<revision>/schema.ts`` and the prose
(``<revision>/**/*.mdx``), from the upstream specification repository at one
pinned commit, into a git-ignored folder. Standard library only.

The requirement catalogue (``2025-11-25/requirements.tsv``) and the method table
(``methods.tsv``) are mcp_ref's own, made from the prose for this project: they
are not upstream, so this cannot fetch them, and the few tests that read them
keep skipping (saying so) unless ``../shared/spec`` or ``MCP_SPEC_DIR`` has them.

    python3 tools/fetch_spec.py                     # from GitHub, into spec/
    python3 tools/fetch_spec.py --source ../modelcontextprotocol   # a local clone
"""

import argparse
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = "modelcontextprotocol/modelcontextprotocol"
#: the upstream commit the fetched files come from (bump it deliberately: the tests judge against it)
COMMIT = "b0f60ba5409db7a6582440a7b473cc0398890f15"
REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
ARCHIVE_URL = f"https://codeload.github.com/{REPOSITORY}/tar.gz/{COMMIT}"
#: what every revision must have once fetched (else the source is not the spec repository)
REQUIRED = ("schema.json", "schema.ts", "index.mdx", "basic/lifecycle.mdx")

_SCHEMA = re.compile(r"schema/(?P<rev>[0-9-]+)/(?P<name>schema\.(?:json|ts))")
_PROSE = re.compile(r"docs/specification/(?P<rev>[0-9-]+)/(?P<name>(?:[\w.-]+/)*[\w.-]+\.mdx)")


class FetchError(Exception):
    """The source could not be read, or is not the specification repository."""


def destination(path: str) -> PurePosixPath | None:
    """Where ``path`` (relative to the repository's root) goes under the spec folder, or None."""
    for pattern in (_SCHEMA, _PROSE):
        m = pattern.fullmatch(path)
        if m and m["rev"] in REVISIONS and ".." not in m["name"].split("/"):
            return PurePosixPath(m["rev"], m["name"])
    return None


def extract(archive: tarfile.TarFile, dest: Path) -> int:
    """Write the wanted files of ``archive`` (one top-level folder, as GitHub and ``git archive
    --prefix`` make them) under ``dest``; returns how many."""
    count = 0
    for member in archive:
        if not member.isfile():
            continue
        _, _, inside = member.name.partition("/")
        target = destination(inside)
        if target is None:
            continue
        data = archive.extractfile(member)
        assert data is not None  # (a regular file)
        path = dest.joinpath(*target.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.read())
        count += 1
    return count


def read_archive(source: str, commit: str) -> bytes:
    """The tar archive of ``commit``: from a local git repository (a clone or a mirror), or a URL."""
    if Path(source).exists():
        try:
            return subprocess.run(
                [
                    "git",
                    "-C",
                    source,
                    "archive",
                    "--format=tar",
                    "--prefix=spec/",
                    commit,
                    "schema",
                    "docs/specification",
                ],
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


def fetch(dest: Path, source: str = ARCHIVE_URL, commit: str = COMMIT) -> int:
    """Replace ``dest`` with the spec files of ``commit``; returns how many were written.
    Written beside it first, so an interrupted fetch leaves the old folder (or none)."""
    data = read_archive(source, commit)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".spec-", dir=dest.parent))
    try:
        try:
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                count = extract(archive, staging)
        except tarfile.TarError as e:
            raise FetchError(f"{source} did not give a tar archive: {e}") from None
        missing = [f"{rev}/{name}" for rev in REVISIONS for name in REQUIRED if not (staging / rev / name).is_file()]
        if missing:
            raise FetchError(f"{source} at {commit} lacks {', '.join(missing)}: not the MCP specification repository?")
        (staging / "README.md").write_text(
            f"Fetched by `make spec` (tools/fetch_spec.py) from {REPOSITORY} at {commit}.\n"
            "Not part of mcp_ref (git-ignored); delete it freely.\n"
        )
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=ROOT / "spec", help="the folder to fill (default: spec/)")
    parser.add_argument(
        "--source", default=ARCHIVE_URL, help="a local git repository of the spec, or a tar.gz URL (default: GitHub)"
    )
    parser.add_argument("--commit", default=COMMIT, help="the upstream commit (default: the pinned one)")
    args = parser.parse_args(argv)
    try:
        count = fetch(args.dest, args.source, args.commit)
    except FetchError as e:
        print(f"make spec: {e}", file=sys.stderr)
        return 1
    print(f"{count} files of revisions {', '.join(REVISIONS)} in {args.dest} ({REPOSITORY} at {args.commit[:12]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
