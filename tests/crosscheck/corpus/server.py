"""A small MCP server in raw JSON (standard library only) that can break ONE rule on demand.

    python server.py                  # a correct server (tools, resources, prompts, completion,
                                      # logging, tasks)
    python server.py --break NAME     # the same server breaking exactly one rule (see BREAKS)

It is deliberately not built on mcp_ref: the cross-checker must catch faults
in code that shares nothing with it. One thread reads stdin; slow tools and
tasks run in threads of their own; every write takes a lock.
"""

import argparse
import base64
import json
import sys
import threading
import time
import uuid
from typing import Any

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26"]
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
RELATED = "io.modelcontextprotocol/related-task"

#: name -> the rule it breaks (the requirement the cross-checker reports)
BREAKS = {
    # lifecycle
    "version-swap": "basic/lifecycle#9",
    "unknown-version-echoed": "basic/lifecycle#10",
    "old-version-for-unknown": "basic/lifecycle#11",
    "no-capabilities": "basic/lifecycle#3",
    # JSON-RPC
    "parse-error-code": "basic/index#3",
    "parse-error-with-id": "basic/index#10",
    "method-not-found-code": "basic/index#3",
    "id-coerced": "basic/index#7",
    "error-code-string": "basic/index#12",
    "answers-notifications": "basic/index#13",
    # ping
    "ping-not-empty": "basic/utilities/ping#1",
    # cancellation
    "answers-after-cancel": "basic/utilities/cancellation#4",
    # progress
    "progress-decreasing": "basic/utilities/progress#4",
    "progress-after-result": "basic/utilities/progress#14",
    "progress-wrong-token": "basic/utilities/progress#7",
    # pagination
    "cursor-loop": "server/utilities/pagination#2",
    "invalid-cursor-accepted": "server/utilities/pagination#5",
    # tools
    "tool-without-input-schema": "server/tools#5",
    "tool-name-with-space": "server/tools#9",
    "tool-listed-twice": "server/tools#11",
    "structured-breaks-schema": "server/tools#16",
    "structured-without-text": "server/tools#15",
    "unknown-tool-success": "server/tools#20",
    "call-no-content": "basic/index#1",  # every tools/call result lacks content (the schema requires it)
    "unknown-tool-32000": "basic/index#3",  # an unknown tool gets -32000, not -32602
    "unknown-tool-32601": "basic/index#3",  # an unknown tool gets Method not found, though tools/call exists
    "tools-undeclared": "server/tools#3",
    # resources
    "resource-not-found-code": "server/resources#7",
    "blob-not-base64": "server/resources#10",
    # prompts
    "prompt-unknown-code": "server/prompts#6",
    "prompt-image-not-base64": "server/prompts#3",
    # logging
    "log-ignores-level": "server/utilities/logging#2",
    "invalid-level-accepted": "server/utilities/logging#3",
    "log-without-capability": "server/utilities/logging#1",
    # completion
    "completion-unknown-code": "server/utilities/completion#2",
    # tasks
    "task-unknown-id-code": "basic/utilities/tasks#68",
    "task-result-without-meta": "basic/utilities/tasks#67",
    "task-cancel-terminal-accepted": "basic/utilities/tasks#60",
    "task-only-tool-runs-without-task": "basic/utilities/tasks#9",
    "task-bad-timestamp": "basic/utilities/tasks#36",
    # stdio framing
    "stdout-log-line": "basic/transports#6",
    "pretty-printed": "basic/transports#3",
    "latin-1": "basic/transports#1",
}
#: variants that bend nothing the spec requires: they must produce no MUST finding
CORRECT = {
    "none": "the server as it should be",
    "unknown-version-refused": "an unknown protocol version is refused with an error (allowed)",
    "tool-errors-in-results": "an unknown tool is reported with isError (the spec lists a protocol error, no keyword)",
    "minimal": "tools only: no resources, prompts, completion, logging or tasks",
    "answers-before-initialize": "a request before initialize is answered (lenient: lifecycle#1 binds the client)",
}

TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {
        "name": "add",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
    },
    {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
    {"name": "progress", "inputSchema": {"type": "object"}},
    {"name": "log", "inputSchema": {"type": "object"}},
    {"name": "batch", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
    {"name": "quick", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
]
PAGE = 3  # tools per page: tools/list takes two pages
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Server:
    def __init__(self, brk: str) -> None:
        self.brk = brk
        self.lock = threading.Lock()
        self.initialized = False
        self.level: str | None = None
        self.cancelled: set[Any] = set()
        self.tasks: dict[str, dict[str, Any]] = {}

    # -- writing ------------------------------------------------------------------------

    def write(self, message: dict[str, Any]) -> None:
        log = message.get("method") == "notifications/message"
        if self.brk == "pretty-printed" and log:
            data = json.dumps(message, indent=2).encode()
        elif self.brk == "latin-1" and log:
            data = json.dumps({**message, "params": {**message["params"], "data": "caf\u00e9"}}, ensure_ascii=False)
            data = data.encode("latin-1")
        else:
            data = json.dumps(message).encode()
        with self.lock:
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.buffer.flush()

    def result(self, rid: Any, result: dict[str, Any]) -> None:
        self.write({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str) -> None:
        err: dict[str, Any] = {"code": str(code) if self.brk == "error-code-string" else code, "message": message}
        out: dict[str, Any] = {"jsonrpc": "2.0", "error": err}
        if rid is not None:
            out["id"] = rid
        self.write(out)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    # -- reading ------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            if self.brk == "parse-error-code":
                self.error(None, -32600, "Invalid Request")
            elif self.brk == "parse-error-with-id":
                self.write({"jsonrpc": "2.0", "id": 0, "error": {"code": -32700, "message": "Parse error"}})
            else:
                self.error(None, -32700, "Parse error")
            return
        if not isinstance(message, dict):
            self.error(None, -32600, "Invalid Request")
            return
        rid = message.get("id")
        if "method" not in message:
            if "result" in message or "error" in message:
                return  # an answer to one of our requests
            self.error(rid if isinstance(rid, str | int) else None, -32600, "Invalid Request")
            return
        method = message["method"]
        bad_id = "id" in message and (not isinstance(rid, str | int) or isinstance(rid, bool))
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or bad_id:
            self.error(None if bad_id else rid, -32600, "Invalid Request")
            return
        params = message.get("params") or {}
        if "id" not in message:
            self.on_notification(method, params)
            return
        if self.brk == "id-coerced" and isinstance(rid, str) and rid.isdigit():
            rid = int(rid)
        try:
            self.on_request(rid, method, params)
        except KeyError as e:
            self.error(rid, -32602, f"Invalid params: missing {e}")

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if self.brk == "answers-notifications":
            self.error(None, -32601, f"Method not found: {method}")
        if method == "notifications/initialized":
            self.initialized = True
            if self.brk == "log-without-capability":
                self.notify("notifications/message", {"level": "info", "data": "hello"})
        elif method == "notifications/cancelled":
            self.cancelled.add(json.dumps(params.get("requestId")))

    def capabilities(self) -> dict[str, Any]:
        if self.brk == "minimal":
            return {"tools": {}}
        caps: dict[str, Any] = {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True},
            "prompts": {},
            "completions": {},
            "logging": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        }
        if self.brk == "tools-undeclared":
            del caps["tools"]
        if self.brk == "log-without-capability":
            del caps["logging"]
        return caps

    def negotiate(self, asked: str) -> str:
        if self.brk == "version-swap":
            return {"2025-11-25": "2025-06-18", "2025-06-18": "2025-11-25"}.get(asked, SUPPORTED[0])
        if asked in SUPPORTED:
            return asked
        if self.brk == "unknown-version-echoed":
            return asked
        if self.brk == "old-version-for-unknown":
            return SUPPORTED[-1]
        return SUPPORTED[0]

    def on_request(self, rid: Any, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            asked = params["protocolVersion"]
            if self.brk == "unknown-version-refused" and asked not in SUPPORTED:
                self.error(rid, -32602, "Unsupported protocol version")
                return
            result: dict[str, Any] = {
                "protocolVersion": self.negotiate(asked),
                "capabilities": self.capabilities(),
                "serverInfo": {"name": "corpus", "version": "1"},
            }
            if self.brk == "no-capabilities":
                del result["capabilities"]
            self.result(rid, result)
            return
        if method == "ping":
            self.result(rid, {"pong": True} if self.brk == "ping-not-empty" else {})
            return
        if not self.initialized and self.brk != "answers-before-initialize":
            self.error(rid, -32600, f"Invalid Request: {method} before initialization")
            return
        handler = getattr(self, "do_" + method.replace("/", "_"), None)
        caps = self.capabilities()
        area = method.split("/")[0]
        area = {"completion": "completions"}.get(area, area)
        declared = area in caps or (self.brk == "tools-undeclared" and area == "tools")
        if handler is None or (
            area in ("tools", "resources", "prompts", "completions", "logging", "tasks") and not declared
        ):
            code = -32603 if self.brk == "method-not-found-code" else -32601
            self.error(rid, code, f"Method not found: {method}")
            return
        handler(rid, params)

    # -- tools --------------------------------------------------------------------------

    def tools(self) -> list[dict[str, Any]]:
        tools = [dict(t) for t in TOOLS]
        if self.brk == "tool-without-input-schema":
            del tools[0]["inputSchema"]
        if self.brk == "tool-name-with-space":
            tools[0]["name"] = "echo text"
        if self.brk == "tool-listed-twice":
            tools.append(dict(TOOLS[0]))
        return tools

    def do_tools_list(self, rid: Any, params: dict[str, Any]) -> None:
        tools = self.tools()
        cursor = params.get("cursor")
        pages = {f"page-{n}": n * PAGE for n in range(1, len(tools) // PAGE + 1)}
        if cursor is None:
            start = 0
        elif cursor in pages:
            start = pages[cursor]
        elif self.brk == "invalid-cursor-accepted":
            start = 0
        else:
            self.error(rid, -32602, "Invalid params: unknown cursor")
            return
        page: dict[str, Any] = {"tools": tools[start : start + PAGE]}
        if start + PAGE < len(tools):
            page["nextCursor"] = f"page-{start // PAGE + 1}"
        elif self.brk == "cursor-loop":
            page["nextCursor"] = f"page-{start // PAGE}"  # the cursor that led here, again
        self.result(rid, page)

    def do_tools_call(self, rid: Any, params: dict[str, Any]) -> None:
        name = params["name"]
        args = params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        tool = next((t for t in self.tools() if t["name"] == name), None)
        if tool is None:
            if self.brk == "unknown-tool-success":
                self.result(rid, {"content": [{"type": "text", "text": "done"}]})
            elif self.brk in ("unknown-tool-32000", "unknown-tool-32601"):
                self.error(rid, int(self.brk[-6:]), f"Unknown tool: {name}")
            elif self.brk == "tool-errors-in-results":
                self.result(rid, {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True})
            else:
                self.error(rid, -32602, f"Unknown tool: {name}")
            return
        support = (tool.get("execution") or {}).get("taskSupport")
        if "task" in params:
            if support not in ("optional", "required"):
                self.error(rid, -32601, f"Method not found: {name} does not run as a task")
                return
            self.start_task(rid, name, args, params["task"], token)
            return
        if support == "required" and self.brk != "task-only-tool-runs-without-task":
            self.error(rid, -32601, f"Method not found: {name} must be called as a task")
            return
        threading.Thread(target=self.run_tool, args=(rid, name, args, token), daemon=True).start()

    def run_tool(self, rid: Any, name: str, args: dict[str, Any], token: Any) -> None:
        result = self.tool_result(rid, name, args, token)
        if result is not None and self.brk == "call-no-content":
            result.pop("content", None)
        if result is not None and (json.dumps(rid) not in self.cancelled or self.brk == "answers-after-cancel"):
            self.result(rid, result)
            if name == "progress" and self.brk == "progress-after-result" and token is not None:
                self.notify("notifications/progress", {"progressToken": token, "progress": 99})

    def tool_result(self, rid: Any, name: str, args: dict[str, Any], token: Any) -> dict[str, Any] | None:
        if name == "echo":
            return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
        if name == "add":
            total = args.get("a", 0) + args.get("b", 0)
            structured = {"total": total} if self.brk == "structured-breaks-schema" else {"sum": total}
            content = (
                [] if self.brk == "structured-without-text" else [{"type": "text", "text": json.dumps(structured)}]
            )
            return {"content": content, "structuredContent": structured}
        if name == "slow":
            for i in range(1, 101):  # 5 s, unless cancelled
                if json.dumps(rid) in self.cancelled:
                    if self.brk != "answers-after-cancel":
                        return None
                    break
                time.sleep(0.05)
                if token is not None and i % 5 == 0:
                    self.notify("notifications/progress", {"progressToken": token, "progress": i, "total": 100})
            return {"content": [{"type": "text", "text": "slept"}]}
        if name == "progress":
            values = [3, 2, 1] if self.brk == "progress-decreasing" else [1, 2, 3]
            if token is not None:
                sent = "someone-else" if self.brk == "progress-wrong-token" else token
                for v in values:
                    self.notify("notifications/progress", {"progressToken": sent, "progress": v, "total": 3})
            return {"content": [{"type": "text", "text": "progressed"}]}
        if name == "log":
            if "logging" not in self.capabilities() and self.brk != "log-without-capability":
                return {"content": [{"type": "text", "text": "no logging here"}]}
            for level in LEVELS:
                passes = self.level is None or LEVELS.index(level) >= LEVELS.index(self.level)
                if passes or self.brk == "log-ignores-level":
                    self.notify("notifications/message", {"level": level, "data": f"a {level} message"})
            return {"content": [{"type": "text", "text": "logged"}]}
        if name == "batch":
            return {"content": [{"type": "text", "text": "batch done"}]}
        if name == "quick":
            time.sleep(0.2)
            return {"content": [{"type": "text", "text": "quick"}]}
        return None

    # -- tasks ----------------------------------------------------------------------------

    def task_view(self, task: dict[str, Any]) -> dict[str, Any]:
        view = {k: task[k] for k in ("taskId", "status", "createdAt", "lastUpdatedAt", "ttl")}
        if self.brk == "task-bad-timestamp":
            view["createdAt"] = "a while ago"
        return view

    def start_task(self, rid: Any, name: str, args: dict[str, Any], meta: dict[str, Any], token: Any) -> None:
        task_id = uuid.uuid4().hex
        task = {"taskId": task_id, "status": "working", "createdAt": now(), "lastUpdatedAt": now()}
        task.update(ttl=meta.get("ttl"), done=threading.Event(), outcome=None, name=name)
        self.tasks[task_id] = task
        self.result(rid, {"task": self.task_view(task)})

        def work() -> None:
            outcome = self.tool_result(f"task-{task_id}", name, args, None)
            if task["status"] == "working":
                task.update(status="completed", outcome=outcome, lastUpdatedAt=now())
            task["done"].set()

        threading.Thread(target=work, daemon=True).start()

    def find_task(self, rid: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        task = self.tasks.get(params["taskId"])
        if task is None:
            code = -32601 if self.brk == "task-unknown-id-code" else -32602
            self.error(rid, code, "Failed to retrieve task: Task not found")
        return task

    def do_tasks_get(self, rid: Any, params: dict[str, Any]) -> None:
        if (task := self.find_task(rid, params)) is not None:
            self.result(rid, self.task_view(task))

    def do_tasks_result(self, rid: Any, params: dict[str, Any]) -> None:
        if (task := self.find_task(rid, params)) is None:
            return

        def answer() -> None:
            task["done"].wait(30)
            result = dict(task["outcome"] or {"content": []})
            if self.brk != "task-result-without-meta":
                result["_meta"] = {RELATED: {"taskId": task["taskId"]}}
            self.result(rid, result)

        threading.Thread(target=answer, daemon=True).start()

    def do_tasks_cancel(self, rid: Any, params: dict[str, Any]) -> None:
        if (task := self.find_task(rid, params)) is None:
            return
        if task["status"] != "working" and self.brk != "task-cancel-terminal-accepted":
            self.error(rid, -32602, f"Cannot cancel a {task['status']} task")
            return
        if task["status"] == "working":
            task.update(status="cancelled", lastUpdatedAt=now())
            task["done"].set()
        self.result(rid, self.task_view(task))

    def do_tasks_list(self, rid: Any, params: dict[str, Any]) -> None:
        if not self.first_page(rid, params):
            return
        self.result(rid, {"tasks": [self.task_view(t) for t in self.tasks.values()]})

    # -- resources, prompts, completion, logging -------------------------------------------

    def first_page(self, rid: Any, params: dict[str, Any]) -> bool:
        """Lists other than tools have one page: any cursor is one we never gave."""
        if params.get("cursor") is not None:
            self.error(rid, -32602, "Invalid params: unknown cursor")
            return False
        return True

    def do_resources_list(self, rid: Any, params: dict[str, Any]) -> None:
        if not self.first_page(rid, params):
            return
        self.result(
            rid,
            {
                "resources": [
                    {"uri": "corpus://text", "name": "text", "mimeType": "text/plain"},
                    {"uri": "corpus://blob", "name": "blob", "mimeType": "image/png"},
                ]
            },
        )

    def do_resources_templates_list(self, rid: Any, params: dict[str, Any]) -> None:
        if not self.first_page(rid, params):
            return
        self.result(rid, {"resourceTemplates": [{"uriTemplate": "corpus://item/{id}", "name": "item"}]})

    def do_resources_read(self, rid: Any, params: dict[str, Any]) -> None:
        uri = params["uri"]
        if uri == "corpus://text":
            self.result(rid, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]})
        elif uri == "corpus://blob":
            blob = "not base64!" if self.brk == "blob-not-base64" else PNG
            self.result(rid, {"contents": [{"uri": uri, "mimeType": "image/png", "blob": blob}]})
        else:
            code = -32603 if self.brk == "resource-not-found-code" else -32002
            self.error(rid, code, f"Resource not found: {uri}")

    def do_resources_subscribe(self, rid: Any, params: dict[str, Any]) -> None:
        self.result(rid, {})

    do_resources_unsubscribe = do_resources_subscribe

    def do_prompts_list(self, rid: Any, params: dict[str, Any]) -> None:
        if not self.first_page(rid, params):
            return
        self.result(
            rid,
            {
                "prompts": [
                    {"name": "plain"},
                    {"name": "greet", "arguments": [{"name": "who", "required": True}]},
                ]
            },
        )

    def do_prompts_get(self, rid: Any, params: dict[str, Any]) -> None:
        name = params["name"]
        args = params.get("arguments") or {}
        if name == "plain":
            data = "%%%" if self.brk == "prompt-image-not-base64" else PNG
            image = {"type": "image", "data": data, "mimeType": "image/png"}
            self.result(rid, {"messages": [{"role": "user", "content": image}]})
        elif name == "greet" and "who" in args:
            self.result(rid, {"messages": [{"role": "user", "content": {"type": "text", "text": f"hi {args['who']}"}}]})
        elif name == "greet":
            self.error(rid, -32602, "Invalid params: missing argument who")
        else:
            code = -32603 if self.brk == "prompt-unknown-code" else -32602
            self.error(rid, code, f"Invalid params: unknown prompt {name}")

    def do_completion_complete(self, rid: Any, params: dict[str, Any]) -> None:
        ref = params["ref"]
        if ref.get("type") == "ref/prompt" and ref.get("name") != "greet":
            code = -32603 if self.brk == "completion-unknown-code" else -32602
            self.error(rid, code, f"Invalid params: unknown prompt {ref.get('name')}")
            return
        self.result(rid, {"completion": {"values": ["world", "web"]}})

    def do_logging_setLevel(self, rid: Any, params: dict[str, Any]) -> None:
        level = params["level"]
        if level not in LEVELS and self.brk != "invalid-level-accepted":
            self.error(rid, -32602, f"Invalid params: unknown level {level}")
            return
        self.level = level if level in LEVELS else self.level
        self.result(rid, {})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *CORRECT])
    args = parser.parse_args()
    server = Server(args.brk)
    if args.brk == "stdout-log-line":
        sys.stdout.write("corpus server ready\n")
        sys.stdout.flush()
    for line in sys.stdin.buffer:
        if line.strip():
            server.handle_line(line)


if __name__ == "__main__":
    main()
