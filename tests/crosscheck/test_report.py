"""The report: the documented JSON shape, text grouped by chapter, JUnit XML, exit status."""

import csv
import xml.etree.ElementTree as ET

import pytest

from mcp_ref.crosscheck.report import Finding, Report
from mcp_ref.crosscheck.rules import RULES, is_must, is_should

from ..conftest import ROOT, spec_path


def sample() -> Report:
    report = Report("python server.py", "2025-11-25")
    report.check("ping/answered-promptly", "pass", ["basic/utilities/ping#1"])
    report.check("cancellation/stops-and-stays-silent", "skip", ["basic/utilities/cancellation#4"], "needs a slow tool")
    report.check("tools/unknown-tool", "fail", ["server/tools#20"], "answered as a success")
    report.add(Finding.of("server/tools#20", "an unknown tool was answered as a success", {"id": 3}, party="server"))
    report.add(Finding.of("server/resources#7", "reading an unknown resource got -32603", {"id": 4}))
    return report


def test_the_json_has_exactly_the_documented_shape() -> None:
    data = sample().to_json()
    assert list(data) == ["target", "revision", "findings", "checks", "summary"]
    assert data["target"] == "python server.py" and data["revision"] == "2025-11-25"
    assert data["findings"][0] == {
        "requirement": "server/tools#20",
        "level": "MUST",
        "message": "an unknown tool was answered as a success",
        "evidence": [{"id": 3}],
    }
    assert all(list(f) == ["requirement", "level", "message", "evidence"] for f in data["findings"])
    assert data["checks"][1] == {
        "name": "cancellation/stops-and-stays-silent",
        "status": "skip",
        "requirements": ["basic/utilities/cancellation#4"],
    }
    assert data["summary"] == {"must": 1, "should": 1, "passed": 1, "skipped": 1}


def test_exit_status_is_one_only_for_a_must() -> None:
    report = sample()
    assert report.exit_status() == 1
    report.findings = [f for f in report.findings if not f.is_must]
    assert report.exit_status() == 0


def test_the_same_fault_twice_adds_evidence_not_a_finding() -> None:
    report = Report("t")
    for i in range(5):
        report.add(Finding.of("basic/index#7", "unknown id", {"id": i}))
    assert len(report.findings) == 1 and len(report.findings[0].evidence) == 3


def test_text_groups_by_chapter_and_ends_with_the_summary() -> None:
    text = sample().to_text()
    lines = text.splitlines()
    assert lines[0] == "mcp-ref cross-check of python server.py"
    chapters = [line for line in lines if line.startswith("== ")]
    assert chapters == [
        "== basic/utilities/ping",
        "== basic/utilities/cancellation",
        "== server/tools",
        "== server/resources",
    ]
    assert "  [skip] cancellation/stops-and-stays-silent -- needs a slow tool" in lines
    assert "  MUST (server) server/tools#20: an unknown tool was answered as a success" in lines
    assert lines[-1] == "1 MUST and 1 SHOULD violated, 0 other; checks: 1 passed, 1 failed, 1 skipped"


def test_junit_has_a_case_per_check_and_per_finding_no_check_covers() -> None:
    suite = ET.fromstring(sample().to_junit())
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "ping/answered-promptly",
        "cancellation/stops-and-stays-silent",
        "tools/unknown-tool",
        "server/resources#7 SHOULD",
    ]
    assert cases[0].find("failure") is None and cases[1].find("skipped") is not None
    assert "server/tools#20" in (cases[2].findtext("failure") or "")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "2", "1")


def test_every_rule_is_a_requirement_of_the_manifest() -> None:
    import tomllib

    with open(ROOT / "spec_notes" / "requirements.toml", "rb") as f:
        ids = {e["id"] for e in tomllib.load(f)["requirement"]}
    assert set(RULES) <= ids, sorted(set(RULES) - ids)


def test_rule_levels_are_the_catalogues() -> None:
    with spec_path("2025-11-25", "requirements.tsv").open(newline="") as f:
        levels = {row["id"]: row["keyword"] for row in csv.DictReader(f, delimiter="\t")}
    for rule in RULES.values():
        assert rule.level == levels[rule.id], rule.id
        # the one rule judged at another level says so, and is documented
        if rule.judged_as is not None:
            assert rule.id == "server/utilities/logging#2" and rule.judged_as == "SHOULD"
        assert is_must(rule.effective_level) or is_should(rule.effective_level), rule.id


@pytest.mark.parametrize("requirement", ["no/such#1", "basic/index#999"])
def test_an_unknown_requirement_is_refused(requirement: str) -> None:
    with pytest.raises(KeyError, match="has no rule"):
        Finding.of(requirement, "x")
