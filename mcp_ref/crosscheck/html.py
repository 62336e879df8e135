"""``--html FILE``: the report as one self-contained page.

The page holds, with no script and nothing fetched from elsewhere:

* the summary and the notes;
* the findings, each with its level, its requirement id linked to the section
  of the specification on modelcontextprotocol.io that states it, our own note
  for it (``mcp_ref.basic.requirements``), its message, and links to the
  messages that show it;
* the message sequence of every session in two lanes (client on the left,
  server on the right), each finding pinned to the message that shows it;
* the checks, by chapter, with the reason of each that failed or was skipped.

A finding is pinned to a message when its evidence is that message (the same
JSON value): the observer and the battery give the message itself as evidence.
"""

import html
import json
from typing import Any, Final

from .report import Finding, Report, evidence_text
from .rules import RULES
from .sections import link, section_title

__all__ = ["render_html"]

#: messages shown per session at most (the page stays readable); the rest are counted
MAX_MESSAGES: Final = 400
_TEXT: Final = 600

_STYLE: Final = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dde6}
.summary{display:flex;gap:12px;margin:10px 0}.summary span{padding:4px 10px;border-radius:12px;background:#e9edf3}
.summary .must{background:#c62828;color:#fff}.summary .should{background:#ef8f00;color:#fff}
.finding{border-left:6px solid #c62828;background:#fff;margin:8px 0;padding:8px 12px;box-shadow:0 1px 2px #0001}
.finding.should{border-color:#ef8f00}.finding.other{border-color:#7a8699}
.level{font-weight:700;margin-right:6px}.finding .note{color:#4a5568}.finding .where{font-size:12px}
a.req{font-family:ui-monospace,monospace;font-weight:600}
.lanes{display:grid;grid-template-columns:1fr 70px 1fr;gap:4px 0;align-items:start}
.lane-head{font-weight:700;text-align:center;padding:4px;background:#e9edf3;border-radius:6px}
.msg{background:#fff;border:1px solid #d8dde6;border-radius:8px;padding:6px 8px;font:12px ui-monospace,monospace;
word-break:break-all;white-space:pre-wrap}
.msg.flagged{border:2px solid #c62828}.msg.flagged.should{border-color:#ef8f00}
.arrow{text-align:center;color:#7a8699;font-size:18px;padding-top:4px}
.pin{display:inline-block;margin:4px 4px 0 0;padding:1px 8px;border-radius:10px;font:600 12px system-ui,sans-serif;
background:#c62828;color:#fff;text-decoration:none}.pin.should{background:#ef8f00}.pin.other{background:#7a8699}
.session{margin:18px 0 6px;font-weight:600;color:#4a5568}
table{border-collapse:collapse;width:100%;background:#fff}
td,th{border:1px solid #d8dde6;padding:4px 8px;text-align:left}
td.fail{color:#c62828;font-weight:700}td.skip{color:#7a8699}td.pass{color:#2e7d32}
"""


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _kind(finding: Finding) -> str:
    return "must" if finding.is_must else "should" if finding.level.startswith(("SHOULD", "RECOMMENDED")) else "other"


def _canonical(value: Any) -> str | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value).strip()
    try:
        text: str = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text
    except (TypeError, ValueError):
        return None


def _pins(report: Report) -> dict[int, list[int]]:
    """message index -> the findings (indexes) pinned to it."""
    by_text: dict[str, int] = {}
    for i, record in enumerate(report.traffic):
        key = _canonical(record["text"])
        if key is not None:
            by_text.setdefault(key, i)
    pins: dict[int, list[int]] = {}
    for f_index, finding in enumerate(report.findings):
        for evidence in finding.evidence:
            key = _canonical(evidence)
            if key is not None and key in by_text and f_index not in pins.get(by_text[key], []):
                pins.setdefault(by_text[key], []).append(f_index)
    return pins


def _finding_html(index: int, finding: Finding, where: list[int]) -> str:
    kind = _kind(finding)
    url = link(finding.requirement)
    rule = RULES.get(finding.requirement)
    req = _esc(finding.requirement)
    ident = f'<a class="req" href="{_esc(url)}">{req}</a>' if url else f'<span class="req">{req}</span>'
    note = f'<div class="note">our note: {_esc(rule.what)}</div>' if rule else ""
    title = section_title(finding.requirement)
    section = f'<div class="where">section: {_esc(title)}</div>' if title else ""
    party = f" ({_esc(finding.party)})" if finding.party else ""
    if finding.revision:
        party += f" [revision {_esc(finding.revision)}]"
    shown = " ".join(f'<a href="#m{m}">message {m + 1}</a>' for m in where)
    evidence = "".join(f'<div class="msg">{_esc(evidence_text(e))}</div>' for e in finding.evidence if not where)
    return (
        f'<div class="finding {kind}" id="f{index}"><span class="level">{_esc(finding.level)}{party}</span>{ident}'
        f"<div>{_esc(finding.message)}</div>{note}{section}"
        + (f'<div class="where">shown by: {shown}</div>' if shown else "")
        + evidence
        + "</div>"
    )


def render_html(report: Report) -> str:
    """The whole page (see the module doc)."""
    pins = _pins(report)
    pinned_to: dict[int, list[int]] = {}
    for m, found in pins.items():
        for f in found:
            pinned_to.setdefault(f, []).append(m)
    s = report.summary()
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>mcp-ref check: {_esc(report.target)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>mcp-ref cross-check of {_esc(report.target)}</h1>",
        f"<div>protocol revision: {_esc(report.revision or '(not negotiated)')}</div>",
        '<div class="summary">'
        f'<span class="must">{s["must"]} MUST</span><span class="should">{s["should"]} SHOULD</span>'
        f"<span>{s['passed']} passed</span><span>{report.count('fail')} failed</span>"
        f"<span>{s['skipped']} skipped</span></div>",
    ]
    if report.notes:
        out.append("<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in report.notes) + "</ul>")
    out.append(f'<h2 id="findings">Findings ({len(report.findings)})</h2>')
    if not report.findings:
        out.append("<p>No requirement was found broken.</p>")
    for i, finding in enumerate(report.findings):
        out.append(_finding_html(i, finding, pinned_to.get(i, [])))
    out.append('<h2 id="sequence">Message sequence</h2>')
    out.append(_sequence(report, pins))
    out.append(
        '<h2 id="checks">Checks</h2><table><tr><th>check</th><th>status</th><th>requirements</th><th>reason</th></tr>'
    )
    for c in report.checks:
        reqs = " ".join(
            f'<a class="req" href="{_esc(link(r))}">{_esc(r)}</a>' if link(r) else _esc(r) for r in c.requirements
        )
        out.append(
            f'<tr><td>{_esc(c.name)}</td><td class="{c.status}">{c.status}</td><td>{reqs}</td>'
            f"<td>{_esc(c.detail)}</td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def _sequence(report: Report, pins: dict[int, list[int]]) -> str:
    if not report.traffic:
        return "<p>No traffic was recorded.</p>"
    out: list[str] = []
    session: Any = object()
    shown = 0
    for i, record in enumerate(report.traffic):
        if record.get("session") != session:
            if shown:
                out.append("</div>")
            session = record.get("session")
            shown = 0
            out.append(f'<div class="session">session {_esc(session)}</div><div class="lanes">')
            out.append('<div class="lane-head">client</div><div></div><div class="lane-head">server</div>')
        shown += 1
        if shown > MAX_MESSAGES and i not in pins:
            continue
        found = [report.findings[f] for f in pins.get(i, [])]
        worst = "" if not found else (" flagged" + ("" if any(f.is_must for f in found) else " should"))
        text = record["text"]
        text = text if len(text) <= _TEXT else text[: _TEXT - 3] + "..."
        badges = "".join(
            f'<a class="pin {_kind(report.findings[f])}" href="#f{f}">'
            f"{_esc(report.findings[f].level)} {_esc(report.findings[f].requirement)}</a>"
            for f in pins.get(i, [])
        )
        box = f'<div class="msg{worst}" id="m{i}"><b>{i + 1}</b> {_esc(text)}<div>{badges}</div></div>'
        if record["dir"] == "c2s":
            out.append(f'{box}<div class="arrow">&rarr;</div><div></div>')
        else:
            out.append(f'<div></div><div class="arrow">&larr;</div>{box}')
    out.append("</div>")
    return "\n".join(out)
