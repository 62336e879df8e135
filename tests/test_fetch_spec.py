"""``make spec`` (tools/fetch_spec.py): the spec's files of the three revisions, from a local
repository laid out as the upstream one (never the network in tests), and the lookup the
tests share (tests/conftest.py)."""

import subprocess
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import ROOT, spec_path, tool_module

REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
PAGES = ("index.mdx", "basic/lifecycle.mdx", "basic/utilities/ping.mdx")


def fetch_tool() -> ModuleType:
    return tool_module("fetch_spec")


def upstream_layout(root: Path, revisions: tuple[str, ...] = REVISIONS) -> None:
    """Files where the specification repository keeps them, and some that must not be taken."""
    for rev in (*revisions, "2024-11-05", "draft"):
        (root / "schema" / rev).mkdir(parents=True)
        (root / "schema" / rev / "schema.json").write_text(f'{{"rev": "{rev}"}}')
        (root / "schema" / rev / "schema.ts").write_text(f"// {rev}")
        for page in PAGES:
            path = root / "docs" / "specification" / rev / page
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {rev} {page}")
        (root / "docs" / "specification" / rev / "basic" / "diagram.png").write_bytes(b"\x89PNG")
    (root / "docs" / "docs.json").write_text("{}")
    (root / "README.md").write_text("not the spec")


def git(cwd: Path, *args: str) -> str:
    run = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return run.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path) -> tuple[Path, str]:
    """A git repository laid out as modelcontextprotocol/modelcontextprotocol; its commit."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    upstream_layout(repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "spec")
    return repo, git(repo, "rev-parse", "HEAD")


def fetched(dest: Path) -> set[str]:
    return {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}


def test_make_spec_takes_the_three_revisions_from_a_local_repository(
    repository: tuple[Path, str], tmp_path: Path
) -> None:
    repo, commit = repository
    tool = fetch_tool()
    dest = tmp_path / "spec"
    assert tool.main(["--dest", str(dest), "--source", str(repo), "--commit", commit]) == 0
    expected = {f"{rev}/{name}" for rev in REVISIONS for name in ("schema.json", "schema.ts", *PAGES)}
    assert fetched(dest) == expected | {"README.md"}  # no other revision, no image, nothing else
    assert (dest / "2025-06-18" / "schema.json").read_text() == '{"rev": "2025-06-18"}'
    assert (dest / "2025-03-26" / "basic" / "lifecycle.mdx").read_text() == "# 2025-03-26 basic/lifecycle.mdx"
    assert commit in (dest / "README.md").read_text()


def test_a_tar_archive_by_url_gives_the_same_files(repository: tuple[Path, str], tmp_path: Path) -> None:
    """The default source is GitHub's tar.gz of the pinned commit (one top-level folder);
    a file:// URL stands in for it here."""
    repo, commit = repository
    archive = tmp_path / "spec.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(repo / "schema", arcname=f"modelcontextprotocol-{commit}/schema")
        tar.add(repo / "docs", arcname=f"modelcontextprotocol-{commit}/docs")
    tool = fetch_tool()
    from_url, from_git = tmp_path / "a", tmp_path / "b"
    tool.fetch(from_url, archive.as_uri(), commit)
    tool.fetch(from_git, str(repo), commit)
    assert fetched(from_url) == fetched(from_git)
    assert all((from_url / f).read_bytes() == (from_git / f).read_bytes() for f in fetched(from_git))


def test_a_source_that_is_not_the_spec_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    repo = tmp_path / "other"
    repo.mkdir()
    upstream_layout(repo, revisions=("2025-11-25",))  # two revisions missing
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "x")
    dest = tmp_path / "spec"
    (dest / "2025-11-25").mkdir(parents=True)
    (dest / "2025-11-25" / "schema.json").write_text("kept")
    tool = fetch_tool()
    with pytest.raises(tool.FetchError, match=r"lacks 2025-06-18/schema\.json"):
        tool.fetch(dest, str(repo), git(repo, "rev-parse", "HEAD"))
    assert fetched(dest) == {"2025-11-25/schema.json"} and (dest / "2025-11-25" / "schema.json").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".spec-")] == []  # no staging left behind
    with pytest.raises(tool.FetchError, match="failed"):
        tool.fetch(dest, str(repo), "0" * 40)  # a commit it does not have
    with pytest.raises(tool.FetchError, match="not give a tar archive"):
        (tmp_path / "garbage").write_bytes(b"not a tar")
        tool.fetch(dest, (tmp_path / "garbage").as_uri())


def test_nothing_outside_the_revisions_is_written() -> None:
    destination = fetch_tool().destination
    assert str(destination("docs/specification/2025-11-25/basic/utilities/tasks.mdx")) == (
        "2025-11-25/basic/utilities/tasks.mdx"
    )
    assert str(destination("schema/2025-03-26/schema.ts")) == "2025-03-26/schema.ts"
    for path in (
        "schema/2025-11-25/schema.mdx",
        "schema/draft/schema.json",
        "docs/specification/2024-11-05/index.mdx",
        "docs/specification/2025-11-25/../../../etc/x.mdx",
        "docs/specification/2025-11-25/basic/diagram.png",
    ):
        assert destination(path) is None, path


def test_the_tests_look_for_the_spec_in_mcp_spec_dir_first(
    repository: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, commit = repository
    fetch_tool().fetch(tmp_path / "mine", str(repo), commit)
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path / "mine"))
    assert spec_path("2025-06-18", "schema.json") == tmp_path / "mine" / "2025-06-18" / "schema.json"
    with pytest.raises(pytest.skip.Exception, match="make spec"):
        spec_path("2025-11-25", "server", "tools.mdx")  # (not in this small copy)
    with pytest.raises(pytest.skip.Exception, match="not upstream"):
        spec_path("2025-11-25", "requirements.tsv")  # mcp_ref's own catalogue


def test_the_spec_folder_is_ignored_by_git() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", "spec/2025-11-25/schema.json"], cwd=ROOT, check=False)
    if ignored.returncode == 128:
        pytest.skip("not a git checkout")
    assert ignored.returncode == 0
