"""The report: the documented JSON shape, text grouped by chapter, JUnit XML, exit status."""

import csv
import xml.etree.ElementTree as ET

import pytest

from mcp_ref.crosscheck.report import Finding, Report
from mcp_ref.crosscheck.rules import RULES, is_must, is_should

from ..conftest import ROOT, spec_missing, spec_path


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
    assert list(data) == ["target", "revision", "findings", "revisions", "checks", "notes", "summary"]
    assert data["target"] == "python server.py" and data["revision"] == "2025-11-25"
    assert data["findings"][0] == {
        "requirement": "server/tools#20",
        "level": "MUST",
        "party": "server",
        # the first section's: the report's revision, never null once one was negotiated (trial30b L1)
        "revision": "2025-11-25",
        "message": "an unknown tool was answered as a success",
        "evidence": ['{"id":3}'],
    }
    assert all(
        list(f) == ["requirement", "level", "party", "revision", "message", "evidence"] for f in data["findings"]
    )
    # evidence has one shape, whoever made it (trial30b L1): strings
    mixed = Report("t")
    mixed.add(Finding.of("server/tools#20", "a text", "not JSON at all", {"id": 4}))
    assert mixed.to_json()["findings"][0]["evidence"] == ["not JSON at all", '{"id":4}']
    assert Report.from_json(mixed.to_json()).findings == mixed.findings
    # every check that did not pass says why
    assert data["checks"][1] == {
        "name": "cancellation/stops-and-stays-silent",
        "status": "skip",
        "requirements": ["basic/utilities/cancellation#4"],
        "revision": "2025-11-25",
        "reason": "needs a slow tool",
    }
    assert data["checks"][2]["reason"] == "answered as a success"
    assert "reason" not in data["checks"][0]
    assert {c["revision"] for c in data["checks"]} == {"2025-11-25"}
    assert data["summary"] == {"must": 1, "should": 1, "passed": 1, "skipped": 1}
    # and it reads back as it was written
    again = Report.from_json(data)
    assert again.findings == sample().findings and [c.detail for c in again.checks] == [
        c.detail for c in sample().checks
    ]
    assert again.to_text() == sample().to_text()


def test_a_later_sections_findings_keep_their_own_revision_in_the_json() -> None:
    report = sample()
    report.section = "2025-06-18"
    report.check("tools/unknown-tool", "fail", ["server/tools#20"], "answered as a success")
    report.add(Finding.of("server/tools#20", "an unknown tool was answered as a success", {"id": 9}, party="server"))
    data = report.to_json()
    assert [f["revision"] for f in data["findings"]] == ["2025-11-25", "2025-11-25", "2025-06-18"]
    assert [c["revision"] for c in data["checks"]] == ["2025-11-25"] * 3 + ["2025-06-18"]
    again = Report.from_json(data)
    assert again.findings == report.findings and again.to_text() == report.to_text()
    # a report with no revision negotiated writes null
    assert Report("t").to_json()["revision"] is None


@pytest.mark.parametrize("party", ["client", "server", None])
def test_a_failed_check_without_a_reason_names_who_broke_its_requirements(party: str | None) -> None:
    """(trial30 #6) a client check's failure is not "the server broke"."""
    report = Report("python client.py", "2025-11-25")
    report.check("sampling/tools-not-declared", "fail", ["schema#25"])
    report.add(Finding.of("schema#25", "answered without sampling.tools", party=party))
    reason = report.to_json()["checks"][0]["reason"]
    assert reason == f"the {party or 'peer'} broke the requirements listed (see the findings)"


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


def _suites(report: Report) -> tuple[ET.Element, ET.Element]:
    root = ET.fromstring(report.to_junit())
    assert root.tag == "testsuites"
    checks, findings = root.findall("testsuite")
    return checks, findings


def test_junit_has_a_case_per_check_and_per_finding_no_failing_check_shows() -> None:
    checks, findings = _suites(sample())
    cases = checks.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "ping/answered-promptly",
        "cancellation/stops-and-stays-silent",
        "tools/unknown-tool",
    ]
    assert cases[0].find("failure") is None and cases[1].find("skipped") is not None
    assert "server/tools#20" in (cases[2].findtext("failure") or "")
    assert (checks.get("tests"), checks.get("failures"), checks.get("skipped")) == ("3", "1", "1")
    assert [c.get("name") for c in findings.findall("testcase")] == ["server/resources#7 SHOULD"]
    # a SHOULD finding is reported, not failed (unless --strict)
    assert (findings.get("tests"), findings.get("failures")) == ("1", "0")
    assert "server/resources#7" in (findings.find("testcase").findtext("system-out") or "")  # type: ignore[union-attr]


def test_junit_strict_fails_should_findings_too() -> None:
    root = ET.fromstring(sample().to_junit(strict=True))
    _, findings = root.findall("testsuite")
    assert (findings.get("tests"), findings.get("failures")) == ("1", "1")
    assert sample().exit_status_for(strict=True) == 1
    only_should = Report("t")
    only_should.check("resources/unknown-uri", "fail", ["server/resources#7"], "got -32603")
    only_should.add(Finding.of("server/resources#7", "reading an unknown resource got -32603", {"id": 4}))
    checks, _ = ET.fromstring(only_should.to_junit()).findall("testsuite")
    case = checks.find("testcase")
    assert case is not None and case.find("failure") is None and "-32603" in (case.findtext("system-out") or "")
    assert checks.get("failures") == "0" and only_should.exit_status_for() == 0
    assert only_should.exit_status_for(strict=True) == 1


def test_junit_status_of_each_check_is_its_own_status() -> None:
    # a finding about a requirement a PASSING check also covers (here: seen outside the
    # check, by the observer) does not turn that check into a failure in JUnit
    report = Report("t", "2025-11-25")
    report.check("ping/answered-promptly", "pass", ["basic/utilities/ping#1"])
    report.check("resources/templates", "pass", ["basic/lifecycle#14"])
    report.check("tools/unknown-tool", "fail", ["server/tools#20"], "answered as a success")
    report.add(Finding.of("basic/utilities/ping#1", "a ping answered late", {"id": 9}))
    report.add(Finding.of("server/tools#20", "an unknown tool was answered as a success", {"id": 3}))
    checks, findings = _suites(report)
    status = {
        c.get("name"): "fail" if c.find("failure") is not None else "skip" if c.find("skipped") is not None else "pass"
        for c in checks.findall("testcase")
    }
    assert status == {c.name: c.status for c in report.checks}
    summary = report.summary()
    assert int(checks.get("failures") or 0) == report.count("fail") == 1
    assert (
        int(checks.get("tests") or 0) - int(checks.get("failures") or 0) - int(checks.get("skipped") or 0)
        == (summary["passed"])
    )
    # the finding no failing check shows is its own failing case, by requirement id
    assert [c.get("name") for c in findings.findall("testcase")] == ["basic/utilities/ping#1 MUST"]


def test_a_check_is_grouped_under_its_own_chapter() -> None:
    report = Report("t", "2025-11-25")
    # the catch-all requirement basic/lifecycle#14 does not make these lifecycle checks
    report.check("resources/templates", "pass", ["basic/lifecycle#14"])
    report.check("completion/complete", "pass", ["basic/lifecycle#14"])
    report.check("sampling/plain", "pass", ["basic/lifecycle#14"])
    report.check("jsonrpc/undeclared-capabilities", "pass", ["server/tools#3"])
    report.check("lifecycle/request-before-initialize", "pass", ["basic/index#3"])
    assert [c.chapter for c in report.checks] == [
        "server/resources",
        "server/utilities/completion",
        "client/sampling",
        "basic/index",
        "basic/lifecycle",
    ]
    chapters = [line for line in report.to_text().splitlines() if line.startswith("== ")]
    assert chapters == [
        "== basic/lifecycle",
        "== basic/index",
        "== server/resources",
        "== server/utilities/completion",
        "== client/sampling",
    ]
    checks, _ = _suites(report)
    assert checks.findall("testcase")[0].get("classname") == "server/resources"


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


def test_the_checkers_own_rules_restate_none_of_the_engines() -> None:
    # [review] an id the engine cites is looked up in its table (basic/requirements.py), never copied
    from mcp_ref.basic.requirements import MODERN_RULES
    from mcp_ref.crosscheck.rules import CHECK_RULES, rule

    assert not set(CHECK_RULES) & (set(RULES) | set(MODERN_RULES))
    assert rule("2026-07-28:basic/patterns/mrtr#12") is MODERN_RULES["2026-07-28:basic/patterns/mrtr#12"]
    assert rule("2026-07-28:basic/index#10") is CHECK_RULES["2026-07-28:basic/index#10"]


def test_the_2026_rules_have_the_catalogues_levels_and_a_status_in_the_manifest() -> None:
    import tomllib

    from mcp_ref.basic.requirements import MODERN_RULES
    from mcp_ref.crosscheck.rules import CHECK_RULES

    levels = {}
    for revision in ("2025-11-25", "2026-07-28"):
        path = spec_path(revision, "requirements.tsv")
        if path is None:
            pytest.skip(spec_missing(revision, "requirements.tsv"))
        with path.open(newline="") as f:
            prefix = "" if revision == "2025-11-25" else revision + ":"
            levels |= {prefix + row["id"]: row["keyword"] for row in csv.DictReader(f, delimiter="\t")}
    with open(ROOT / "spec_notes" / "2026-07-28" / "requirements.toml", "rb") as f:
        statuses = {"2026-07-28:" + e["id"]: e.get("status") for e in tomllib.load(f)["requirement"]}
    for rule in [*CHECK_RULES.values(), *MODERN_RULES.values()]:
        assert rule.level == levels[rule.id], rule.id
        if rule.id.startswith("2026-07-28:"):
            assert statuses.get(rule.id) in ("implemented", "divergent", "not-applicable"), rule.id


@pytest.mark.parametrize("requirement", ["no/such#1", "basic/index#999"])
def test_an_unknown_requirement_is_refused(requirement: str) -> None:
    with pytest.raises(KeyError, match="has no rule"):
        Finding.of(requirement, "x")


def test_the_same_evidence_is_kept_once() -> None:
    """(trial30b L5) one answer seen by several engines was printed three times as evidence."""
    report = Report("t")
    for _ in range(3):
        report.add(Finding.of("server/tools#20", "answered", {"id": 20}))
    report.add(Finding.of("server/tools#20", "answered", {"id": 21}))
    assert report.findings[0].evidence == ({"id": 20}, {"id": 21})


def test_the_text_lists_the_revisions_the_latest_first() -> None:
    # check --help: one section per revision, the latest first (trial30c D9); the main section (the
    # checks before any revision was negotiated, and its own revision's) takes its revision's place
    report = Report("python server.py", "2025-11-25")
    report.check("lifecycle/version-negotiation", "pass", ["basic/lifecycle#9"])
    for section in ("2026-07-28", None, "2025-06-18"):
        report.section = section
        report.check("ping/answered-promptly", "pass", ["basic/utilities/ping#1"])
    report.section = None
    headers = [line for line in report.to_text().splitlines() if line.startswith("=== ")]
    assert headers == [
        "=== revision 2026-07-28",
        "=== revision 2025-11-25 (and the checks before any revision was negotiated)",
        "=== revision 2025-06-18",
    ]
    text = report.to_text()
    assert text.index("lifecycle/version-negotiation") > text.index("=== revision 2025-11-25")
    # with no later revision the main section opens the report, as before, without a header
    older = Report("python server.py", "2025-11-25")
    older.check("ping/answered-promptly", "pass", ["basic/utilities/ping#1"])
    older.section = "2025-06-18"
    older.check("ping/answered-promptly", "pass", ["basic/utilities/ping#1"])
    assert [line for line in older.to_text().splitlines() if line.startswith("=== ")] == ["=== revision 2025-06-18"]
