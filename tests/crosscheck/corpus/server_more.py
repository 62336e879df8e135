"""More broken stdio servers (standard library only): each variant breaks ONE rule today's corpus did not.

    python server_more.py [--break NAME]

The correct server of ``server.py`` (raw JSON, no mcp_ref), with its tools
marked read-only where they are, so that ``mcp-ref check`` with its defaults
-- no configuration naming the tools -- exercises them. ``BREAKS`` maps each
variant to the requirement the report must name; ``CORRECT`` are variants
that bend only what the spec leaves open (no MUST finding).
"""

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from server import LEVELS, Server

BREAKS = {
    # JSON-RPC, from the server's side
    "request-id-object": "basic/index#4",
    "request-id-null": "basic/index#5",
    "request-id-reused": "basic/index#6",
    "result-missing": "basic/index#8",
    "error-without-message": "basic/index#11",
    "notification-with-id": "basic/index#14",
    "meta-key-malformed": "basic/index#26",
    "output-schema-invalid": "basic/index#24",
    # the client's capabilities
    "asks-sampling-undeclared": "basic/lifecycle#14",
    # cancellation and progress, from the server's side
    "cancels-unknown-request": "basic/utilities/cancellation#1",
    "progress-token-object": "basic/utilities/progress#1",
    # capabilities the server uses without declaring them
    "resources-undeclared": "server/resources#1",
    "prompts-undeclared": "server/prompts#1",
    "completion-undeclared": "server/utilities/completion#1",
    "tasks-undeclared": "basic/utilities/tasks#1",
    # tools, prompts
    "tool-name-too-long": "server/tools#7",
    "prompt-audio-not-base64": "server/prompts#4",
    "accepts-invalid-arguments": "server/tools#20",
    "tool-error-as-protocol-error": "schema#37",
    # tasks
    "task-created-completed": "basic/utilities/tasks#26",
    "task-terminal-changes": "basic/utilities/tasks#28",
    "task-bad-last-updated": "basic/utilities/tasks#37",
    "task-cancel-not-cancelled": "basic/utilities/tasks#61",
    # values the prose or the schema constrain
    "completion-too-many": "basic/index#1",  # 150 completion values (the schema allows 100)
    "resource-uri-not-uri": "server/resources#6",  # the resource "corpus text" (no scheme, a space)
}
CORRECT = {
    "none": "the server as it should be (read-only tools marked)",
    "crlf": "every line ends with CR LF (the CR is JSON whitespace)",
    "quiet-pings": "answers ping with an empty result carrying _meta (allowed)",
}
#: the variants whose fault only shows when every tool is called (--call-all-tools)
CALL_ALL = {"accepts-invalid-arguments"}
READ_ONLY = {"echo", "add", "quick", "log", "progress"}
AUDIO = "UklGRg=="


class More(Server):
    def write(self, message: dict[str, Any]) -> None:
        if self.brk == "error-without-message" and isinstance(message.get("error"), dict):
            message = {**message, "error": {"code": message["error"]["code"]}}
        if (
            self.brk == "meta-key-malformed"
            and isinstance(message.get("result"), dict)
            and "tools" in message["result"]
        ):
            message = {**message, "result": {**message["result"], "_meta": {"-bad/key": 1}}}
        if self.brk == "crlf":
            with self.lock:
                sys.stdout.buffer.write(json.dumps(message).encode() + b"\r\n")
                sys.stdout.buffer.flush()
            return
        super().write(message)

    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        family = {
            "resources-undeclared": "resources",
            "prompts-undeclared": "prompts",
            "completion-undeclared": "completions",
            "tasks-undeclared": "tasks",
        }.get(self.brk)
        if family is not None:
            caps.pop(family, None)
        return caps

    def on_request(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        family = {
            "resources-undeclared": "resources",
            "prompts-undeclared": "prompts",
            "completion-undeclared": "completion",
            "tasks-undeclared": "tasks",
        }.get(self.brk)
        if family is not None and method.split("/")[0] == family and self.initialized:
            handler = getattr(self, "do_" + method.replace("/", "_"))
            handler(rid, params)  # served, though not declared
            return
        if method == "ping" and self.brk == "quiet-pings":
            self.result(rid, {"_meta": {"com.example/quiet": True}})
            return
        if method == "completion/complete" and self.brk == "completion-too-many" and self.completes(params):
            self.result(rid, {"completion": {"values": [f"w{i}" for i in range(150)], "hasMore": True}})
            return
        if method == "resources/list" and self.brk == "resource-uri-not-uri" and not params.get("cursor"):
            self.result(rid, {"resources": [{"uri": "corpus text", "name": "text", "mimeType": "text/plain"}]})
            return
        if method == "resources/read" and self.brk == "resource-uri-not-uri" and params.get("uri") == "corpus text":
            self.result(rid, {"contents": [{"uri": "corpus text", "mimeType": "text/plain", "text": "hello"}]})
            return
        if method == "completion/complete" and self.brk == "result-missing":
            self.write({"jsonrpc": "2.0", "id": rid, "completion": {"values": []}})
            return
        super().on_request(rid, method, params)

    @staticmethod
    def completes(params: dict[str, Any]) -> bool:
        ref = params.get("ref")
        return not isinstance(ref, dict) or ref.get("type") != "ref/prompt" or ref.get("name") == "greet"

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        super().on_notification(method, params)
        if method != "notifications/initialized":
            return
        extra: list[dict[str, Any]] = []
        if self.brk == "request-id-object":
            extra = [{"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}]
        elif self.brk == "request-id-null":
            extra = [{"jsonrpc": "2.0", "id": None, "method": "ping"}]
        elif self.brk == "request-id-reused":
            extra = [{"jsonrpc": "2.0", "id": "s-1", "method": "ping"}]
        elif self.brk == "notification-with-id":
            extra = [
                {
                    "jsonrpc": "2.0",
                    "id": 900,
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "hi"},
                }
            ]
        elif self.brk == "asks-sampling-undeclared":
            ask = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}
            extra = [{"jsonrpc": "2.0", "id": "s-ask", "method": "sampling/createMessage", "params": ask}]
        elif self.brk == "cancels-unknown-request":
            extra = [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}]
        elif self.brk == "progress-token-object":
            extra = [
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {}, "progress": 1}}
            ]
        for message in extra:
            self.write(message)
        if self.brk == "request-id-reused":
            threading.Thread(target=self.again, daemon=True).start()

    def again(self) -> None:
        time.sleep(0.3)  # after the client answered the first
        self.write({"jsonrpc": "2.0", "id": "s-1", "method": "ping"})

    def tools(self) -> list[dict[str, Any]]:
        tools = []
        for tool in super().tools():
            tool = dict(tool)
            if tool["name"] in READ_ONLY:
                tool["annotations"] = {"readOnlyHint": True}
            tools.append(tool)
        if self.brk == "tool-name-too-long":
            tools[0]["name"] = "e" * 130
        if self.brk == "output-schema-invalid":
            tools[1]["outputSchema"] = {"type": "object", "properties": {"sum": {"type": "nonsense"}}}
        if self.brk == "accepts-invalid-arguments":
            tools[0]["inputSchema"] = {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            }
        return tools

    def do_tools_call(self, rid: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        if self.brk == "tool-error-as-protocol-error" and name == "echo":
            self.error(rid, -32603, "Internal error: the echo backend is down")
            return
        tool = next((t for t in self.tools() if t["name"] == name), None)
        if tool is not None and self.brk != "accepts-invalid-arguments":
            required = tool["inputSchema"].get("required", [])
            if any(r not in (params.get("arguments") or {}) for r in required):
                self.result(rid, {"content": [{"type": "text", "text": "missing arguments"}], "isError": True})
                return
        if self.brk == "tool-name-too-long" and name == "e" * 130:
            params = {**params, "name": "echo"}
        super().do_tools_call(rid, params)

    def do_prompts_get(self, rid: Any, params: dict[str, Any]) -> None:
        if params.get("name") == "plain" and self.brk == "prompt-audio-not-base64":
            audio = {"type": "audio", "data": "not base64 at all!", "mimeType": "audio/wav"}
            self.result(rid, {"messages": [{"role": "user", "content": audio}]})
            return
        super().do_prompts_get(rid, params)

    def task_view(self, task: dict[str, Any]) -> dict[str, Any]:
        view = super().task_view(task)
        if self.brk == "task-bad-last-updated":
            view["lastUpdatedAt"] = "yesterday, about noon"
        if self.brk == "task-terminal-changes" and task.get("reported_terminal"):
            view["status"] = "working"
        if view["status"] in ("completed", "failed", "cancelled"):
            task["reported_terminal"] = True
        return view

    def start_task(self, rid: Any, name: str, args: dict[str, Any], meta: dict[str, Any], token: Any) -> None:
        if self.brk == "task-created-completed":
            original = self.result

            def created(rid2: Any, result: dict[str, Any]) -> None:
                if rid2 == rid and "task" in result:
                    result = {**result, "task": {**result["task"], "status": "completed"}}
                original(rid2, result)

            self.result = created  # type: ignore[method-assign]
            try:
                super().start_task(rid, name, args, meta, token)
            finally:
                self.result = original  # type: ignore[method-assign]
            return
        super().start_task(rid, name, args, meta, token)

    def do_tasks_cancel(self, rid: Any, params: dict[str, Any]) -> None:
        if self.brk == "task-cancel-not-cancelled":
            task = self.find_task(rid, params)
            if task is not None and task["status"] == "working":
                self.result(rid, self.task_view(task))  # still working: not cancelled
                return
            if task is None:
                return
        super().do_tasks_cancel(rid, params)

    def tool_result(self, rid: Any, name: str, args: dict[str, Any], token: Any) -> dict[str, Any] | None:
        if name == "add" and not all(isinstance(args.get(k, 0), int | float) for k in ("a", "b")):
            return {"content": [{"type": "text", "text": "a and b are numbers"}], "isError": True}
        if name == "quick" and self.brk == "task-cancel-not-cancelled":
            time.sleep(1.0)  # long enough to be cancelled while working
        return super().tool_result(rid, name, args, token)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *CORRECT])
    args = parser.parse_args()
    server = More(args.brk)
    for line in sys.stdin.buffer:
        if line.strip():
            server.handle_line(line)


if __name__ == "__main__":
    _ = LEVELS
    main()
