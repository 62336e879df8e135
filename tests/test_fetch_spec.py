"""``make spec`` (tools/fetch_spec.py): every revision's files and the tasks extension's, from
local repositories laid out as the upstream ones (never the network in tests), with the
catalogues tools/extract_requirements.py makes of them; that extractor's output against the
team's catalogues; and the lookup the tests share (tests/conftest.py)."""

import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .conftest import ROOT, SHARED_SPEC, spec_path, tool_module

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
FOLDERS = (*REVISIONS, "ext-tasks")
LEGACY_PAGES = ("index.mdx", "basic/lifecycle.mdx", "basic/utilities/ping.mdx")
MODERN_PAGES = ("index.mdx", "basic/versioning.mdx", "basic/patterns/mrtr.mdx")


def fetch_tool() -> ModuleType:
    return tool_module("fetch_spec")


def pages(rev: str) -> tuple[str, ...]:
    return MODERN_PAGES if rev == "2026-07-28" else LEGACY_PAGES


def upstream_layout(root: Path, revisions: tuple[str, ...] = REVISIONS) -> None:
    """Files where the specification repository keeps them, and some that must not be taken.
    Each page holds one normative statement, so the catalogues have a row per page."""
    for rev in (*revisions, "draft"):
        (root / "schema" / rev).mkdir(parents=True)
        (root / "schema" / rev / "schema.json").write_text(f'{{"rev": "{rev}"}}')
        (root / "schema" / rev / "schema.ts").write_text(f"// {rev}")
        for page in pages(rev):
            path = root / "docs" / "specification" / rev / page
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {rev} {page}\n\nServers **MUST** follow {page} of {rev}.\n")
        (root / "docs" / "specification" / rev / "basic" / "diagram.png").write_bytes(b"\x89PNG")
        # two schema pages: the generated reference under docs/, a skeleton under schema/
        (root / "docs" / "specification" / rev / "schema.mdx").write_text(f"# reference of {rev}\n")
        (root / "schema" / rev / "schema.mdx").write_text(f"# skeleton of {rev}\n")
    (root / "schema" / "2026-07-28" / "examples" / "Tool").mkdir(parents=True)
    (root / "schema" / "2026-07-28" / "examples" / "Tool" / "with-no-parameters.json").write_text("{}")
    (root / "docs" / "docs.json").write_text("{}")
    (root / "README.md").write_text("not the spec")


def tasks_layout(root: Path) -> None:
    """Files where the ext-tasks repository keeps them."""
    for name in ("schema.json", "schema.ts", "spec.schema.json", "spec.types.ts"):
        (root / "schema" / "draft").mkdir(parents=True, exist_ok=True)
        (root / "schema" / "draft" / name).write_text(f"// tasks {name}")
    (root / "specification" / "draft").mkdir(parents=True)
    (root / "specification" / "draft" / "tasks.md").write_text("# Tasks\n\nReceivers **MUST** keep tasks.\n")
    (root / "seps").mkdir()
    (root / "seps" / "2663-tasks-extension.md").write_text("# SEP-2663\n")
    (root / "seps" / "1686-tasks.md").write_text("# an older SEP\n")
    (root / "README.md").write_text("not the extension")


def git(cwd: Path, *args: str) -> str:
    run = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return run.stdout.strip()


def commit_all(repo: Path) -> str:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "spec")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repositories(tmp_path: Path) -> tuple[ModuleType, tuple[Any, ...]]:
    """Git repositories laid out as modelcontextprotocol/modelcontextprotocol and
    modelcontextprotocol/ext-tasks; the sources that read them."""
    tool = fetch_tool()
    spec, tasks = tmp_path / "upstream", tmp_path / "ext-tasks"
    spec.mkdir()
    tasks.mkdir()
    upstream_layout(spec)
    tasks_layout(tasks)
    sources = (
        tool.Source(tool.SPEC, str(spec), commit_all(spec)),
        tool.Source(tool.TASKS, str(tasks), commit_all(tasks)),
    )
    return tool, sources


def fetched(dest: Path) -> set[str]:
    return {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}


def test_make_spec_takes_every_revision_and_the_extension_and_catalogues_them(
    repositories: tuple[ModuleType, tuple[Any, ...]], tmp_path: Path
) -> None:
    tool, sources = repositories
    dest = tmp_path / "spec"
    made = tool.fetch(dest, sources)
    expected = {f"{rev}/{name}" for rev in REVISIONS for name in ("schema.json", "schema.ts", *pages(rev))}
    expected |= {f"{rev}/schema.mdx" for rev in REVISIONS}
    expected |= {"2026-07-28/examples/Tool/with-no-parameters.json"}
    expected |= {f"ext-tasks/{name}" for name in ("schema.json", "schema.ts", "spec.schema.json", "spec.types.ts")}
    expected |= {"ext-tasks/tasks.mdx", "ext-tasks/sep-2663-tasks-extension.md"}
    catalogues = {f"{folder}/requirements.tsv" for folder in FOLDERS} | {
        "2025-11-25/methods.tsv",
        "2026-07-28/methods.tsv",
    }
    # no draft, no image, no other page or SEP; the catalogues and a README beside them
    assert fetched(dest) == expected | catalogues | {"README.md"}
    assert (dest / "2025-06-18" / "schema.json").read_text() == '{"rev": "2025-06-18"}'
    assert (dest / "2025-03-26" / "basic" / "lifecycle.mdx").read_text().startswith("# 2025-03-26 basic/lifecycle")
    # schema.mdx: the generated reference, but 2026-07-28's skeleton (its statements are schema.ts's)
    assert (dest / "2025-11-25" / "schema.mdx").read_text() == "# reference of 2025-11-25\n"
    assert (dest / "2026-07-28" / "schema.mdx").read_text() == "# skeleton of 2026-07-28\n"
    assert (dest / "ext-tasks" / "tasks.mdx").read_text().startswith("# Tasks")
    assert all(commit in (dest / "README.md").read_text() for commit in (s.commit for s in sources))
    # one statement per page: its id, its text
    assert made == {**{rev: len(pages(rev)) for rev in REVISIONS}, "ext-tasks": 1}
    rows = (dest / "2026-07-28" / "requirements.tsv").read_text().splitlines()
    assert rows[0].startswith("id\tfile\tline\t") and rows[0].endswith("\tfingerprint")
    assert [row.split("\t")[0] for row in rows[1:]] == ["index#1", "basic/versioning#1", "basic/patterns/mrtr#1"]
    assert "Servers MUST follow basic/versioning.mdx of 2026-07-28." in rows[2]
    assert (dest / "ext-tasks" / "requirements.tsv").read_text().splitlines()[1].startswith("tasks#1\ttasks.mdx\t")


def test_the_command_line_takes_both_sources(
    repositories: tuple[ModuleType, tuple[Any, ...]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool, (spec, tasks) = repositories
    dest = tmp_path / "spec"
    argv = ["--dest", str(dest), "--source", spec.location, "--commit", spec.commit]
    argv += ["--tasks-source", tasks.location, "--tasks-commit", tasks.commit]
    assert tool.main(argv) == 0
    out = capsys.readouterr().out
    assert "statements catalogued: 2024-11-05 3, 2025-03-26 3, 2025-06-18 3, 2025-11-25 3" in out
    assert (dest / "ext-tasks" / "requirements.tsv").exists()


def test_a_tar_archive_by_url_gives_the_same_files(
    repositories: tuple[ModuleType, tuple[Any, ...]], tmp_path: Path
) -> None:
    """The default sources are GitHub's tar.gz of the pinned commits (one top-level folder);
    file:// URLs stand in for them here."""
    tool, sources = repositories
    by_url = []
    for source in sources:
        repo = Path(source.location)
        archive = tmp_path / f"{repo.name}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for top in sorted(p for p in repo.iterdir() if p.name != ".git"):
                tar.add(top, arcname=f"{repo.name}-{source.commit}/{top.name}")
        by_url.append(tool.Source(source.upstream, archive.as_uri(), source.commit))
    from_url, from_git = tmp_path / "a", tmp_path / "b"
    tool.fetch(from_url, tuple(by_url))
    tool.fetch(from_git, sources)
    assert fetched(from_url) == fetched(from_git)
    assert all((from_url / f).read_bytes() == (from_git / f).read_bytes() for f in fetched(from_git))


def test_a_source_that_is_not_the_spec_leaves_the_folder_as_it_was(
    repositories: tuple[ModuleType, tuple[Any, ...]], tmp_path: Path
) -> None:
    tool, (_, tasks) = repositories
    repo = tmp_path / "other"
    repo.mkdir()
    upstream_layout(repo, revisions=("2025-11-25",))  # four revisions missing
    wrong = tool.Source(tool.SPEC, str(repo), commit_all(repo))
    dest = tmp_path / "spec"
    (dest / "2025-11-25").mkdir(parents=True)
    (dest / "2025-11-25" / "schema.json").write_text("kept")
    with pytest.raises(tool.FetchError, match=r"lack 2024-11-05/schema\.json"):
        tool.fetch(dest, (wrong, tasks))
    assert fetched(dest) == {"2025-11-25/schema.json"} and (dest / "2025-11-25" / "schema.json").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".spec-")] == []  # no staging left behind
    with pytest.raises(tool.FetchError, match="failed"):
        tool.fetch(dest, (tool.Source(tool.SPEC, str(repo), "0" * 40), tasks))  # a commit it does not have
    with pytest.raises(tool.FetchError, match="not give a tar archive"):
        (tmp_path / "garbage").write_bytes(b"not a tar")
        tool.fetch(dest, (tool.Source(tool.SPEC, (tmp_path / "garbage").as_uri(), "x"), tasks))


def test_nothing_outside_the_revisions_is_written() -> None:
    tool = fetch_tool()
    destination = tool.destination
    assert str(destination("docs/specification/2025-11-25/basic/utilities/tasks.mdx")) == (
        "2025-11-25/basic/utilities/tasks.mdx"
    )
    assert str(destination("schema/2025-03-26/schema.ts")) == "2025-03-26/schema.ts"
    assert str(destination("docs/specification/2024-11-05/index.mdx")) == "2024-11-05/index.mdx"
    assert str(destination("schema/2026-07-28/examples/Tool/a.json")) == "2026-07-28/examples/Tool/a.json"
    assert str(destination("specification/draft/tasks.md", tool.TASKS)) == "ext-tasks/tasks.mdx"
    for path in (
        "schema/2025-11-25/schema.mdx",  # 2025-11-25's schema page is the one under docs/
        "docs/specification/2026-07-28/schema.mdx",  # 2026-07-28's is the skeleton under schema/
        "schema/draft/schema.json",
        "docs/specification/draft/index.mdx",
        "docs/specification/2025-11-25/../../../etc/x.mdx",
        "docs/specification/2025-11-25/basic/diagram.png",
    ):
        assert destination(path) is None, path
    for path in ("seps/1686-tasks.md", "README.md", "schema/draft/schema.json"):
        assert destination(path, tool.TASKS if path != "schema/draft/schema.json" else tool.SPEC) is None, path


def test_the_extractor_makes_the_teams_catalogues_byte_for_byte(tmp_path: Path) -> None:
    """tools/extract_requirements.py, run on the team's spec files, writes the team's
    requirements.tsv (every revision and the extension) and methods.tsv exactly: the
    catalogues a lone clone makes with ``make spec`` are the ones CI reads from ../shared."""
    team = Path(os.environ.get("MCP_SPEC_DIR") or SHARED_SPEC)
    theirs = [team / folder / "requirements.tsv" for folder in FOLDERS]
    if not all(path.exists() for path in theirs):
        pytest.skip(
            f"the team's catalogues are not in {team}: nothing to compare with (they are in "
            "../shared/spec beside the checkout, as in CI; or set MCP_SPEC_DIR to a folder that has them)"
        )
    copy = tmp_path / "spec"
    for folder in FOLDERS:
        shutil.copytree(team / folder, copy / folder, ignore=shutil.ignore_patterns("*.tsv"))
    made = fetch_tool().catalogues(copy)
    assert made["2026-07-28"] == 675 and made["ext-tasks"] == 75 and made["2025-11-25"] == 537
    written = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*.tsv"))
    assert written == sorted(
        p.relative_to(team).as_posix() for folder in FOLDERS for p in (team / folder).glob("*.tsv")
    )
    for name in written:
        assert (copy / name).read_bytes() == (team / name).read_bytes(), name


def test_the_tests_look_for_the_spec_in_mcp_spec_dir_first(
    repositories: tuple[ModuleType, tuple[Any, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool, sources = repositories
    tool.fetch(tmp_path / "mine", sources)
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path / "mine"))
    assert spec_path("2025-06-18", "schema.json") == tmp_path / "mine" / "2025-06-18" / "schema.json"
    assert spec_path("2026-07-28", "requirements.tsv") == tmp_path / "mine" / "2026-07-28" / "requirements.tsv"
    with pytest.raises(pytest.skip.Exception, match="make spec"):
        spec_path("2025-11-25", "server", "tools.mdx")  # (not in this small copy)
    (tmp_path / "mine" / "2025-11-25" / "methods.tsv").unlink()
    with pytest.raises(pytest.skip.Exception, match=r"make spec.*tools/extract_requirements\.py"):
        spec_path("2025-11-25", "methods.tsv")  # mcp_ref's own catalogue: made, not fetched


def test_the_spec_folder_is_ignored_by_git() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", "spec/2025-11-25/schema.json"], cwd=ROOT, check=False)
    if ignored.returncode == 128:
        pytest.skip("not a git checkout (the .gitignore rule for spec/ is checked in one)")
    assert ignored.returncode == 0
