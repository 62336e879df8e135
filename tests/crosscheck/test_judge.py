"""``mcp-ref judge``: recorded traffic in the shapes a maintainer has, judged offline."""

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_ref.cli import main
from mcp_ref.crosscheck.judge import judge_file
from mcp_ref.crosscheck.observer import Direction
from mcp_ref.crosscheck.traffic import TrafficFormatError, read_traffic, traffic_header, traffic_line

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
}
INIT_OK = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "_meta": {"progressToken": "p"}}}
# the fault: progress that does not increase
PROGRESS = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}}
DONE = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
TRAFFIC: list[tuple[str, Any]] = [
    ("c2s", INIT),
    ("s2c", INIT_OK),
    ("c2s", INITIALIZED),
    ("c2s", CALL),
    ("s2c", PROGRESS),
    ("s2c", PROGRESS),
    ("s2c", DONE),
]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def the_tap(tmp_path: Path) -> str:
    lines = [traffic_header("stdio", "python server.py")]
    lines += [traffic_line(Direction(d), json.dumps(m).encode(), ts=1.0) for d, m in TRAFFIC]
    return write(tmp_path, "traffic.jsonl", "".join(lines))


def a_json_list(tmp_path: Path) -> str:
    words = {"c2s": "client->server", "s2c": "server->client"}
    return write(tmp_path, "t.json", json.dumps([{"direction": words[d], "message": m} for d, m in TRAFFIC]))


def inline_sent_received(tmp_path: Path) -> str:
    words = {"c2s": "sent", "s2c": "received"}
    return write(tmp_path, "t.jsonl", "\n".join(json.dumps({"type": words[d], **m}) for d, m in TRAFFIC))


def claude_desktop_log(tmp_path: Path) -> str:
    who = {"c2s": "client", "s2c": "server"}
    lines = [
        f"2025-11-25T10:00:0{i}.000Z [demo] [info] Message from {who[d]}: {json.dumps(m)} {{ metadata: undefined }}"
        for i, (d, m) in enumerate(TRAFFIC)
    ]
    lines.insert(1, "2025-11-25T10:00:00.500Z [demo] [info] Server started and connected successfully")
    return write(tmp_path, "mcp-server-demo.log", "\n".join(lines))


def arrows(tmp_path: Path) -> str:
    arrow = {"c2s": "-->", "s2c": "<--"}
    return write(tmp_path, "t.log", "\n".join(f"{arrow[d]} {json.dumps(m)}" for d, m in TRAFFIC))


def wrapped_object(tmp_path: Path) -> str:
    return write(tmp_path, "t.json", json.dumps({"messages": [{"from": d, "data": json.dumps(m)} for d, m in TRAFFIC]}))


@pytest.mark.req("basic/utilities/progress#4")
@pytest.mark.parametrize(
    "make", [the_tap, a_json_list, inline_sent_received, claude_desktop_log, arrows, wrapped_object]
)
def test_every_shape_is_judged_the_same(make: Any, tmp_path: Path) -> None:
    report = judge_file(make(tmp_path))
    assert [(f.requirement, f.party) for f in report.findings] == [("basic/utilities/progress#4", "server")]
    assert report.revision == "2025-11-25"
    assert report.findings[0].evidence == (PROGRESS,)


def test_the_taps_header_names_transport_and_target(tmp_path: Path) -> None:
    report = judge_file(the_tap(tmp_path))
    assert report.target == "python server.py"
    records, header = read_traffic(Path(the_tap(tmp_path)).read_text())
    assert header["transport"] == "stdio" and len(records) == len(TRAFFIC)


def test_inspector_history_pairs_get_made_up_ids(tmp_path: Path) -> None:
    history = [
        {"request": json.dumps({"method": "tools/list"}), "response": json.dumps({"tools": []})},
        {"request": {"method": "ping"}},
    ]
    records, _ = read_traffic(json.dumps(history))
    assert [json.loads(r.data) for r in records] == [
        {"jsonrpc": "2.0", "id": "history-1", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "history-1", "result": {"tools": []}},
        {"jsonrpc": "2.0", "id": "history-2", "method": "ping"},
    ]


def test_sent_and_received_from_the_servers_side() -> None:
    records, _ = read_traffic('{"dir": "sent", "message": {}}', perspective="server")
    assert records[0].direction is Direction.TO_CLIENT


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "empty"),
        ('{"a": 1}', "without a list"),
        ('{"x": 1}\n{"y": 2}', "line 1 has no direction"),
        ("hello\nworld", "no messages found"),
        ('[{"what": "c2s"}]', "entry 1 has no direction"),
    ],
)
def test_what_is_not_traffic_is_refused_saying_why(text: str, problem: str) -> None:
    with pytest.raises(TrafficFormatError, match=problem):
        read_traffic(text)


@pytest.mark.req("basic/transports#6")
def test_stdio_traffic_with_a_stray_line(tmp_path: Path) -> None:
    lines = [traffic_header("stdio", "srv")] + [
        traffic_line(Direction(d), json.dumps(m).encode()) for d, m in TRAFFIC[:3]
    ]
    lines.append(traffic_line(Direction.TO_CLIENT, b"listening on stdio"))
    report = judge_file(write(tmp_path, "t.jsonl", "".join(lines)))
    assert [(f.requirement, f.party) for f in report.findings] == [("basic/transports#6", "server")]
    assert report.findings[0].evidence == ("listening on stdio",)


def test_the_command_prints_text_json_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = the_tap(tmp_path)
    assert main(["judge", path]) == 1  # progress#4 is a MUST
    out = capsys.readouterr().out
    assert "MUST (server) basic/utilities/progress#4" in out and out.rstrip().endswith("0 skipped")
    junit = tmp_path / "report.xml"
    assert main(["judge", "--json", "--junit", str(junit), path]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"must": 1, "should": 0, "passed": 0, "skipped": 0}
    assert b"progress#4" in junit.read_bytes()


def test_clean_traffic_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "t.json", json.dumps([{"dir": d, "message": m} for d, m in TRAFFIC[:4]]))
    assert main(["judge", path]) == 0


def test_usage_errors_exit_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["judge", write(tmp_path, "x.txt", "nothing here")]) == 2
    assert "no messages found" in capsys.readouterr().err


def test_a_log_judged_from_the_wrong_side_says_so_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = inline_sent_received(tmp_path)  # "sent" and "received" as the client saw them
    assert main(["judge", "--as", "server", path]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2] == (
        "note: the directions look reversed (initialize went from server to client, and 4 of 4 messages only one"
        " side sends went the wrong way): was it recorded on the client's side? judge it with --as client"
    )
    # judged from the side it was kept on: no such note, the one real finding
    report = judge_file(path, perspective="client")
    assert not any("reversed" in n for n in report.notes)
    assert [f.requirement for f in report.findings] == ["basic/utilities/progress#4"]


def test_a_log_with_its_labels_swapped_is_told_apart_from_a_wrong_perspective(tmp_path: Path) -> None:
    swapped = [("s2c" if d == "c2s" else "c2s", m) for d, m in TRAFFIC]
    path = write(tmp_path, "t.json", json.dumps([{"dir": d, "message": m} for d, m in swapped]))
    note = judge_file(path).notes[0]
    # c2s / s2c do not depend on --as: another --as would change nothing
    assert note.startswith("the directions look reversed (initialize went from server to client")
    assert note.endswith(": the log may name them the other way round") and "--as" not in note


def test_the_first_answer_from_the_client_side_is_an_initialize_result() -> None:
    from mcp_ref.crosscheck.judge import reversed_directions
    from mcp_ref.crosscheck.traffic import Record

    # a log kept by the server that starts after initialize was received: only its result shows
    started_late = [(Direction.TO_SERVER, INIT_OK), (Direction.TO_CLIENT, INITIALIZED)]
    why = reversed_directions([Record(d, json.dumps(m).encode()) for d, m in started_late])
    assert (
        why
        == "an initialize result went from client to server, and 2 of 2 messages only one side sends went the wrong way"
    )
    # methods either side sends (ping, progress) and one stray message the wrong way prove nothing
    either = [(Direction.TO_CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "ping"}), (Direction.TO_SERVER, PROGRESS)]
    assert reversed_directions([Record(d, json.dumps(m).encode()) for d, m in either]) is None
    mostly_right = [(Direction(d), m) for d, m in TRAFFIC] + [(Direction.TO_CLIENT, CALL)]
    assert reversed_directions([Record(d, json.dumps(m).encode()) for d, m in mostly_right]) is None


@pytest.mark.req("basic/utilities/tasks#9")
def test_judge_and_tap_see_a_task_only_tool_run_without_a_task_as_check_does() -> None:
    """What `check` establishes by calling (tasks#9) is judged passively too: same verdict on the same traffic."""
    import json as _json

    from mcp_ref.crosscheck.judge import judge_records
    from mcp_ref.crosscheck.observer import Direction
    from mcp_ref.crosscheck.traffic import Record

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    caps = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}
    tool = {"name": "batch", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}
    messages = [
        (Direction.TO_SERVER, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        (
            Direction.TO_CLIENT,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": caps,
                    "serverInfo": {"name": "s", "version": "1"},
                },
            },
        ),
        (Direction.TO_SERVER, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        (Direction.TO_SERVER, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        (Direction.TO_CLIENT, {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
        (Direction.TO_SERVER, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "batch"}}),
        (
            Direction.TO_CLIENT,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"content": [{"type": "text", "text": "needs a task"}], "isError": True},
            },
        ),
        (Direction.TO_SERVER, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "batch"}}),
        (Direction.TO_CLIENT, {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "needs a task"}}),
    ]
    report = judge_records([Record(d, _json.dumps(m).encode()) for d, m in messages])
    assert [(f.requirement, f.evidence[0]["id"]) for f in report.findings] == [("basic/utilities/tasks#9", 2)]
