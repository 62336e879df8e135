"""``mcp-ref explain``: ids of every revision and of the tasks extension, with or without their prefix."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_ref.cli import main
from mcp_ref.crosscheck import explain as explain_module
from mcp_ref.crosscheck.explain import explain

from ..conftest import spec_path


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    explain_module._catalogue.cache_clear()
    yield
    explain_module._catalogue.cache_clear()


def out_of(capsys: pytest.CaptureFixture[str], *ids: str) -> str:
    assert main(["explain", *ids]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("written", ["2026-07-28:basic/patterns/mrtr#4", "basic/patterns/mrtr#4"])
def test_an_id_of_2026_with_or_without_its_prefix(written: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = out_of(capsys, written)
    assert out.startswith("2026-07-28:basic/patterns/mrtr#4 (")
    assert "mcp_ref:  implemented" in out and "mcp_ref.basic.patterns.mrtr.SUPPORTED_REQUESTS" in out
    assert ("2025-11-25 has no basic/patterns/mrtr#4" in out) == (written == "basic/patterns/mrtr#4")
    if spec_path("2026-07-28", "requirements.tsv") is not None:
        assert "(MAY, server)" in out and "InputRequiredResult" in out
        assert "link:     https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#supported" in out


def test_an_id_the_2026_checker_reports_has_our_note_too(capsys: pytest.CaptureFixture[str]) -> None:
    out = out_of(capsys, "2026-07-28:basic/patterns/mrtr#12")
    assert "our note: requestState failing verification is rejected" in out
    assert "(MUST" in out and "/2026-07-28/basic/patterns/mrtr#" in out


@pytest.mark.parametrize("written", ["ext-tasks:tasks#2", "tasks#2"])
def test_an_id_of_the_tasks_extension(written: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = out_of(capsys, written)
    assert out.startswith("ext-tasks:tasks#2 (")
    assert "mcp_ref:  " in out
    assert ("the tasks extension's" in out) == (written == "tasks#2")


def test_an_id_of_an_older_revision_names_what_it_is_the_same_as(capsys: pytest.CaptureFixture[str]) -> None:
    out = out_of(capsys, "2024-11-05:basic/lifecycle#3")
    assert out.startswith("2024-11-05:basic/lifecycle#3 (")
    assert "(same as 2025-11-25:basic/lifecycle#3)" in out
    assert "link:     https://modelcontextprotocol.io/specification/2024-11-05/basic/lifecycle#initialization" in out


def test_an_unprefixed_id_2025_has_stays_2025s(capsys: pytest.CaptureFixture[str]) -> None:
    e = explain("basic/lifecycle#9")
    assert (e.revision, e.id, e.resolved_from) == ("2025-11-25", "basic/lifecycle#9", None)


def test_without_the_spec_checkout_the_manifest_and_our_tables_still_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCP_SPEC_DIR", str(tmp_path))
    out = out_of(capsys, "2026-07-28:basic/patterns/mrtr#12", "basic/patterns/mrtr#4")
    assert "the spec:" not in out
    assert "our note: requestState failing verification is rejected" in out
    assert "link:     https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#" in out
    assert "2026-07-28:basic/patterns/mrtr#4 (MAY" not in out and "mcp_ref:  implemented" in out
    # (trial30 #5) no bare "(?)": what is missing, and how to get it
    assert "(?)" not in out and "2026-07-28:basic/patterns/mrtr#4 (level not known)" in out
    assert out.count("set MCP_SPEC_DIR") == 2 and "make spec" in out
    # the chapter's page, which the id names, even without the section
    assert "link:     https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr\n" in out
    out = out_of(capsys, "ext-tasks:tasks#2")
    assert "link:     https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md\n" in out


def test_an_id_of_the_tasks_extension_has_a_link_to_its_section(capsys: pytest.CaptureFixture[str]) -> None:
    spec_path("ext-tasks", "requirements.tsv")  # (skips, saying why, without the catalogue)
    out = out_of(capsys, "ext-tasks:tasks#2")
    page = "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md"
    assert f"link:     {page}#capability-negotiation" in out
    assert "set MCP_SPEC_DIR" not in out


def test_an_unknown_id_names_the_ids_of_its_chapter_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "basic/patterns/mrtr#999"]) == 2
    err = capsys.readouterr().err
    assert "'basic/patterns/mrtr#999' is not a requirement of any catalogue mcp-ref knows" in err
    assert "2026-07-28:basic/patterns/mrtr#1, 2026-07-28:basic/patterns/mrtr#2," in err
