"""``--html``: one self-contained page, rendered by a real headless Chromium (Debian's ``chromium``).

The page is judged as a browser shows it: the DOM Chromium builds (``--dump-dom``)
must hold each finding, its requirement id linked to its section on
modelcontextprotocol.io with our note, and the finding pinned to the message
that shows it; the screenshot (``--screenshot``) must show the findings in
their colour. Chromium is installed by ``.ci/run``; where it is missing and we
are root, the fixture installs it with apt-get, else the tests skip saying why.
"""

import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from mcp_ref.cli import main
from mcp_ref.crosscheck.html import render_html
from mcp_ref.crosscheck.judge import judge_records
from mcp_ref.crosscheck.observer import Direction
from mcp_ref.crosscheck.report import Report
from mcp_ref.crosscheck.traffic import Record

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
#: the colour of a MUST finding on the page (#c62828)
MUST_RED = (0xC6, 0x28, 0x28)


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env, capture_output=True, timeout=600)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"], check=False, env=env, capture_output=True, timeout=1200
        )
        found = shutil.which("chromium")
    if found is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it: apt-get install chromium, as root)")
    return found


def run_chromium(chromium: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    profile = tmp_path / "profile"  # a fresh profile for every run
    argv = [chromium, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(argv, capture_output=True, timeout=120, check=True)


def traffic() -> list[Record]:
    def rec(direction: Direction, message: object) -> Record:
        return Record(direction, json.dumps(message).encode())

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"logging": {}},
        "serverInfo": {"name": "s", "version": "1"},
    }
    return [
        rec(Direction.TO_SERVER, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        rec(Direction.TO_CLIENT, {"jsonrpc": "2.0", "id": 0, "result": result}),
        rec(Direction.TO_SERVER, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        rec(Direction.TO_SERVER, {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        rec(Direction.TO_CLIENT, {"jsonrpc": "2.0", "id": 1, "result": {"pong": True}}),
        rec(
            Direction.TO_CLIENT,
            {"jsonrpc": "2.0", "id": 7, "method": "notifications/message", "params": {"level": "info", "data": "x"}},
        ),
    ]


@pytest.fixture
def report() -> Report:
    report = judge_records(traffic(), target="a server under test")
    assert {f.requirement for f in report.findings} == {"basic/index#14"}, report.to_text()
    return report


def test_the_page_is_self_contained_and_pins_findings_to_messages(report: Report) -> None:
    page = render_html(report)
    assert "<script" not in page and "src=" not in page and "@import" not in page  # nothing fetched
    assert 'href="https://modelcontextprotocol.io/specification/2025-11-25/basic#notifications"' in page
    assert 'id="m5"' in page and 'href="#f0"' in page and 'href="#m5"' in page


def test_chromium_shows_each_finding_linked_and_pinned(chromium: str, report: Report, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    dom = run_chromium(chromium, tmp_path, "--dump-dom", page.as_uri()).stdout.decode()
    # the finding: level, id linked to its section of the spec, our note, the message that shows it
    finding = dom[dom.index('id="f0"') :]
    finding = finding[: finding.index("</div></div>") if "</div></div>" in finding else 2000]
    assert "MUST NOT" in finding and "basic/index#14" in finding
    assert 'href="https://modelcontextprotocol.io/specification/2025-11-25/basic#notifications"' in finding
    assert "our note: a notification carries no id" in finding
    assert 'href="#m5"' in finding
    # the message sequence: six messages in two lanes, the flagged one carries the pin
    assert dom.count('class="msg') == 6
    flagged = dom[dom.index('id="m5"') - 40 : dom.index('id="m5"') + 600]
    assert "flagged" in flagged and 'href="#f0"' in flagged and "notifications/message" in flagged


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of an 8-bit RGB/RGBA PNG (what Chromium writes), standard library only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line[i] for i in range(stride) if i % channels < 3))
        prev = line
    return width, height, rows


def test_the_screenshot_shows_the_findings(chromium: str, report: Report, tmp_path: Path) -> None:
    page, shot = tmp_path / "report.html", tmp_path / "report.png"
    page.write_text(render_html(report), encoding="utf-8")
    run_chromium(chromium, tmp_path, "--window-size=1000,900", f"--screenshot={shot}", page.as_uri())
    width, height, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (1000, 900)
    red = [
        y for y, row in enumerate(rows) if bytes(MUST_RED) in b"".join(row[i : i + 3] for i in range(0, len(row), 3))
    ]
    # the MUST badge near the top, the finding's bar, and the pinned message further down
    assert red and red[0] < 150 and red[-1] - red[0] > 200, (red[:3], red[-3:])


def test_html_from_the_command_line(chromium: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "traffic.jsonl"
    log.write_text("\n".join(json.dumps({"dir": r.direction.value, "message": json.loads(r.data)}) for r in traffic()))
    page = tmp_path / "judged.html"
    assert main(["judge", "--html", str(page), str(log)]) == 1
    dom = run_chromium(chromium, tmp_path, "--dump-dom", page.as_uri()).stdout.decode()
    assert "basic/index#14" in dom and "Message sequence" in dom
    capsys.readouterr()


@pytest.mark.parametrize(
    "requirement, shown",
    [
        (
            "basic/lifecycle#9",
            [
                "basic/lifecycle#9 (MUST",
                "our note: a server answers a version it supports with that version",
                "link:     https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation",
            ],
        ),
        ("server/utilities/logging#2", ["judged as SHOULD", "section:  server/utilities/logging:"]),
    ],
)
def test_explain_prints_our_note_and_the_link(
    requirement: str, shown: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", requirement]) == 0
    out = capsys.readouterr().out
    assert all(line in out for line in shown), out


def test_explain_an_id_it_does_not_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "basic/lifecycle#999"]) == 2
    err = capsys.readouterr().err
    assert "'basic/lifecycle#999' is not a requirement of any catalogue mcp-ref knows" in err
    assert "basic/lifecycle#9" in err


def test_every_requirement_reported_has_its_section_as_the_catalogue_says() -> None:
    import csv

    from mcp_ref.crosscheck.rules import RULES
    from mcp_ref.crosscheck.sections import SECTIONS

    from ..conftest import spec_path

    catalogue = spec_path("2025-11-25", "requirements.tsv")
    rows = {r["id"]: r for r in csv.DictReader(catalogue.open(encoding="utf-8"), delimiter="\t")}
    plain = {r for r in RULES if ":" not in r}
    assert plain <= set(SECTIONS)
    assert {rid: (rows[rid]["file"], rows[rid]["section"]) for rid in SECTIONS if ":" not in rid} == {
        rid: where for rid, where in SECTIONS.items() if ":" not in rid
    }
