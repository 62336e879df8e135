"""Findings, checks and the report: text, JSON and JUnit XML.

A :class:`Finding` is one violated requirement, shown by one or more
messages (its evidence). A :class:`Check` is one thing the battery tried,
with a status (pass, fail or skip) and the requirements it covers. The
:class:`Report` gathers both for one target and writes them out:

* :meth:`Report.to_json` -- exactly the shape documented in README.md
  ("Checking your own implementation");
* :meth:`Report.to_text` -- grouped by spec chapter, then a summary line;
* :meth:`Report.to_junit` -- for CI: a suite with one test case per check (with
  the check's own status), and a suite with one failing test case per finding
  that no failing check shows.

The exit status of a run is :meth:`Report.exit_status`: 1 when a MUST (or
MUST NOT) is violated, else 0.
"""

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal

import attrs

from .rules import chapter_of, is_must, is_should, rule

__all__ = ["Finding", "Check", "Report", "Status", "evidence_text"]

Status = Literal["pass", "fail", "skip"]
#: evidence messages kept per finding (the rest are counted)
MAX_EVIDENCE: Final = 3
#: messages kept for the message sequence of --html
MAX_TRAFFIC: Final = 5000
#: characters of one evidence message shown in text output
_TEXT_EVIDENCE: Final = 300


@attrs.frozen
class Finding:
    """A violated requirement. ``evidence``: the messages that show it (JSON values),
    oldest first; ``party`` ("server" or "client") is who broke it."""

    requirement: str
    level: str
    message: str
    evidence: tuple[Any, ...] = ()
    party: str | None = None
    #: the protocol revision of the session that showed it (None: before any was negotiated)
    revision: str | None = None

    @classmethod
    def of(cls, requirement: str, message: str, *evidence: Any, party: str | None = None) -> "Finding":
        """A finding at the level the cross-checker judges ``requirement`` with."""
        return cls(requirement, rule(requirement).effective_level, message, tuple(evidence), party)

    @property
    def chapter(self) -> str:
        return chapter_of(self.requirement)

    @property
    def is_must(self) -> bool:
        return is_must(self.level)

    def to_json(self, revision: str | None = None) -> dict[str, Any]:
        """``revision``: the report's own (its first section's), written where the finding names none."""
        return {
            "requirement": self.requirement,
            "level": self.level,
            "party": self.party,
            "revision": self.revision or revision,
            "message": self.message,
            # one shape: each piece a string (a message as compact JSON, or a text)
            "evidence": [
                e if isinstance(e, str) else json.dumps(e, ensure_ascii=False, separators=(",", ":"))
                for e in self.evidence
            ],
        }


@attrs.define
class Check:
    """One check of the battery. ``detail`` says why it was skipped, or what it saw."""

    name: str
    status: Status
    requirements: list[str] = attrs.Factory(list)
    detail: str = ""
    #: the protocol revision of the session it ran in (None: before any was negotiated)
    revision: str | None = None

    @property
    def chapter(self) -> str:
        """The chapter the check is about: the prefix of its name ("tools/...",
        "transport/..."), not its first requirement (a catch-all such as
        basic/lifecycle#14 would put resources/templates under lifecycle)."""
        prefix = self.name.split("/", 1)[0]
        if prefix in _CHECK_CHAPTERS:
            return _CHECK_CHAPTERS[prefix]
        return chapter_of(self.requirements[0]) if self.requirements else "other"

    def to_json(self, party: str | None = None, revision: str | None = None) -> dict[str, Any]:
        """``party``: who broke the requirements of a failed check (from the findings), named in
        its reason when the check gave none; ``revision``: the report's own, written where the check
        names none."""
        data: dict[str, Any] = {"name": self.name, "status": self.status, "requirements": list(self.requirements)}
        if (self.revision or revision) is not None:
            data["revision"] = self.revision or revision
        if self.status != "pass" or self.detail:
            # why it failed or was skipped (or what a passing check saw)
            default = {
                "fail": f"the {party or 'peer'} broke the requirements listed (see the findings)",
                "skip": "skipped",
            }
            data["reason" if self.status != "pass" else "detail"] = self.detail or default[self.status]
        return data


def _evidence_value(text: Any) -> Any:
    """A piece of JSON evidence as the report held it: a message (an object or array) read back."""
    if isinstance(text, str) and text[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, (dict, list)):
            return value
    return text


def evidence_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= _TEXT_EVIDENCE else text[: _TEXT_EVIDENCE - 3] + "..."


@attrs.define
class Report:
    """What one run found about one target."""

    target: str
    revision: str | None = None
    findings: list[Finding] = attrs.Factory(list)
    checks: list[Check] = attrs.Factory(list)
    #: remarks that are not findings (a revision we cannot judge, a target that went away)
    notes: list[str] = attrs.Factory(list)
    #: the messages seen, in order: {"session", "dir" ("c2s" | "s2c"), "text"} (for --html; not in the JSON)
    traffic: list[dict[str, Any]] = attrs.Factory(list)
    #: the revision the checks and findings being added now belong to (one section per revision)
    section: str | None = None
    #: the revisions the target speaks, as the battery found out
    revisions: list[str] = attrs.Factory(list)

    def record(self, session: Any, direction: str, data: bytes | str) -> None:
        """Keep one message for the message sequence (up to ``MAX_TRAFFIC``)."""
        if len(self.traffic) < MAX_TRAFFIC:
            text = data if isinstance(data, str) else data.decode("utf-8", "replace")
            self.traffic.append({"session": session, "dir": direction, "text": text})

    # -- building -------------------------------------------------------------------------

    def add(self, finding: Finding) -> None:
        """Add a finding; the same requirement with the same message (in the same revision) adds
        evidence instead. A finding without a revision takes the report's current ``section``."""
        if finding.revision is None and self.section is not None:
            finding = attrs.evolve(finding, revision=self.section)
        for i, old in enumerate(self.findings):
            if (
                old.requirement == finding.requirement
                and old.message == finding.message
                and old.revision == finding.revision
            ):
                new = tuple(e for e in finding.evidence if e not in old.evidence)  # the same proof once
                if new and len(old.evidence) < MAX_EVIDENCE:
                    merged = (old.evidence + new)[:MAX_EVIDENCE]
                    self.findings[i] = attrs.evolve(old, evidence=merged)
                return
        self.findings.append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.add(f)

    def check(self, name: str, status: Status, requirements: Sequence[str], detail: str = "") -> Check:
        c = Check(name, status, list(requirements), detail, self.section)
        self.checks.append(c)
        return c

    # -- reading -------------------------------------------------------------------------

    @property
    def must(self) -> int:
        return sum(1 for f in self.findings if is_must(f.level))

    @property
    def should(self) -> int:
        return sum(1 for f in self.findings if is_should(f.level))

    def count(self, status: Status) -> int:
        return sum(1 for c in self.checks if c.status == status)

    def exit_status(self) -> int:
        return 1 if self.must else 0

    def requirements_found(self) -> set[str]:
        return {f.requirement for f in self.findings}

    def summary(self) -> dict[str, int]:
        return {"must": self.must, "should": self.should, "passed": self.count("pass"), "skipped": self.count("skip")}

    def summary_line(self) -> str:
        s = self.summary()
        failed = self.count("fail")
        return (
            f"{s['must']} MUST and {s['should']} SHOULD violated, {len(self.findings) - s['must'] - s['should']}"
            f" other; checks: {s['passed']} passed, {failed} failed, {s['skipped']} skipped"
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Report":
        """The report :meth:`to_json` wrote (details and notes are not in that shape)."""
        report = cls(str(data.get("target", "")), data.get("revision"))

        def section(revision: str | None) -> str | None:
            # the first section's findings and checks are written with the report's revision
            return None if revision == report.revision else revision

        for f in data.get("findings", []):
            evidence = tuple(_evidence_value(e) for e in f.get("evidence", ()))
            revision = section(f.get("revision"))
            report.findings.append(
                Finding(f["requirement"], f["level"], f["message"], evidence, f.get("party"), revision)
            )
        for c in data.get("checks", []):
            detail = str(c.get("reason") or c.get("detail") or "")
            requirements = list(c.get("requirements", []))
            report.checks.append(Check(c["name"], c["status"], requirements, detail, section(c.get("revision"))))
        report.revisions = list(data.get("revisions", []))
        report.notes.extend(str(n) for n in data.get("notes", []))
        return report

    # -- writing -------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "revision": self.revision,
            # every finding and check names its revision: those of the first section, the report's
            "findings": [f.to_json(self.revision) for f in self.findings],
            "revisions": list(self.revisions),
            "checks": [c.to_json(self._party_of(c), self.revision) for c in self.checks],
            "notes": list(self.notes),
            "summary": self.summary(),
        }

    def _party_of(self, check: Check) -> str | None:
        """Who broke the requirements of ``check``, when the findings about them name one party."""
        parties = {f.party for f in self.findings if f.requirement in check.requirements and f.party}
        return parties.pop() if len(parties) == 1 else None

    def to_text(self) -> str:
        lines = [f"mcp-ref cross-check of {self.target}", f"protocol revision: {self.revision or '(not negotiated)'}"]
        if self.revisions:
            lines.append(f"revisions the target speaks: {', '.join(self.revisions)}")
        lines += [f"note: {n}" for n in self.notes]
        # the revisions the latest first (check --help): the main section (its revision, and what ran before
        # any was negotiated) takes its revision's place, under a header when a later one came first
        others = sorted({c.revision for c in self.checks if c.revision} - {self.revision}, reverse=True)
        later = [r for r in others if self.revision is not None and r > self.revision]
        sections: list[str | None] = [*later, None, *(r for r in others if r not in later)]
        for section in sections:
            if section is not None:
                lines += ["", f"=== revision {section}"]
            elif later:
                lines += ["", f"=== revision {self.revision} (and the checks before any revision was negotiated)"]

            def mine(revision: str | None, section: str | None = section) -> bool:
                return revision in (None, self.revision) if section is None else revision == section

            checks = [c for c in self.checks if mine(c.revision)]
            findings = [f for f in self.findings if mine(f.revision)]
            chapters = sorted({c.chapter for c in checks} | {f.chapter for f in findings}, key=_chapter_key)
            for chapter in chapters:
                lines.append("")
                lines.append(f"== {chapter}")
                for c in (c for c in checks if c.chapter == chapter):
                    detail = f" -- {c.detail}" if c.detail else ""
                    lines.append(f"  [{c.status}] {c.name}{detail}")
                for f in (f for f in findings if f.chapter == chapter):
                    who = f" ({f.party})" if f.party else ""
                    lines.append(f"  {f.level}{who} {f.requirement}: {f.message}")
                    lines += [f"      > {evidence_text(e)}" for e in f.evidence]
        lines.append("")
        lines.append(self.summary_line())
        return "\n".join(lines) + "\n"

    def to_junit(self, *, strict: bool = False) -> bytes:
        """JUnit XML, two suites in ``<testsuites>``.

        The first has one test case per check; a check fails the suite when it shows a
        MUST finding (or, ``strict``, any finding): a check whose findings are only SHOULDs
        passes, with them in its ``system-out``. The second has one test case per finding
        that no check carries, failing for a MUST (any, ``strict``), so every violation shows
        in CI by its requirement id. A skipped check is skipped.
        """
        root = ET.Element("testsuites", name=f"mcp-ref check {self.target}")
        suite = ET.SubElement(root, "testsuite", name=f"mcp-ref check {self.target}")
        shown: set[int] = set()
        failures = 0
        for c in self.checks:
            case = ET.SubElement(suite, "testcase", classname=c.chapter, name=c.name)
            if c.status == "skip":
                ET.SubElement(case, "skipped", message=c.detail or "skipped")
            elif c.status == "fail":
                mine = [i for i, f in enumerate(self.findings) if f.requirement in c.requirements]
                shown.update(mine)
                text = "\n".join(_finding_text(self.findings[i]) for i in mine) or c.detail
                if strict or any(self.findings[i].is_must for i in mine) or not mine:
                    ET.SubElement(case, "failure", message=c.detail or "check failed").text = text
                    failures += 1
                else:
                    ET.SubElement(case, "system-out").text = text
        _totals(suite, len(self.checks), failures, self.count("skip"))
        rest = [f for i, f in enumerate(self.findings) if i not in shown]
        others = ET.SubElement(root, "testsuite", name=f"mcp-ref findings {self.target}")
        failing = 0
        for f in rest:
            case = ET.SubElement(others, "testcase", classname=f.chapter, name=f"{f.requirement} {f.level}")
            if strict or f.is_must:
                ET.SubElement(case, "failure", message=f.message).text = _finding_text(f)
                failing += 1
            else:
                ET.SubElement(case, "system-out").text = _finding_text(f)
        _totals(others, len(rest), failing, 0)
        data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
        return data

    def exit_status_for(self, *, strict: bool = False) -> int:
        """1 when a MUST is violated (``strict``: any finding with a SHOULD or MUST level), else 0."""
        return 1 if self.must or (strict and self.should) else 0


def _totals(suite: ET.Element, tests: int, failures: int, skipped: int) -> None:
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")


def _finding_text(f: Finding) -> str:
    return "\n".join([f"{f.level} {f.requirement}: {f.message}", *(evidence_text(e) for e in f.evidence)])


_CHAPTER_ORDER = (
    "basic/lifecycle",
    "basic/index",
    "basic/transports",
    "basic/authorization",
    "basic/utilities/ping",
    "basic/utilities/cancellation",
    "basic/utilities/progress",
    "server/utilities/pagination",
    "server/tools",
    "server/resources",
    "server/prompts",
    "server/utilities/completion",
    "server/utilities/logging",
    "basic/utilities/tasks",
    "client/roots",
    "client/sampling",
    "client/elicitation",
    "schema",
)


#: the chapter of each prefix of a check's name
_CHECK_CHAPTERS: Final = {
    "authorization": "basic/authorization",
    "cancellation": "basic/utilities/cancellation",
    "completion": "server/utilities/completion",
    "elicitation": "client/elicitation",
    "jsonrpc": "basic/index",
    "lifecycle": "basic/lifecycle",
    "logging": "server/utilities/logging",
    "pagination": "server/utilities/pagination",
    "ping": "basic/utilities/ping",
    "progress": "basic/utilities/progress",
    "prompts": "server/prompts",
    "resources": "server/resources",
    "roots": "client/roots",
    "sampling": "client/sampling",
    "tasks": "basic/utilities/tasks",
    "tools": "server/tools",
    "transport": "basic/transports",
}


def _chapter_key(chapter: str) -> tuple[int, str]:
    return (_CHAPTER_ORDER.index(chapter) if chapter in _CHAPTER_ORDER else len(_CHAPTER_ORDER), chapter)
