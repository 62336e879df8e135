"""A small MCP client in raw JSON (standard library only) that can break ONE rule on demand.

    python client.py [--break NAME] -- SERVER COMMAND...

It launches the server (the fixture, in the tests), initialises with the
sampling, elicitation (form) and roots capabilities, answers whatever the
server asks until the server ends the session, and leaves. ``--break NAME``
makes it break exactly one rule (``BREAKS`` names the requirement). It shares
no code with mcp_ref.
"""

import argparse
import json
import subprocess
import sys
import threading
import time
from typing import Any

#: name -> the rule it breaks (the requirement the fixture reports)
BREAKS = {
    "ping-not-empty": "basic/utilities/ping#1",
    "root-not-file": "client/roots#3",
    "answers-tools-without-capability": "schema#25",
    "answers-undeclared-url-mode": "client/elicitation#34",
    "form-answer-breaks-schema": "client/elicitation#56",
    "unknown-method-code": "basic/index#3",
    "answers-with-another-id": "basic/index#7",
    "error-code-string": "basic/index#12",
    "writes-a-log-line": "basic/transports#7",
    "request-before-initialized": "basic/lifecycle#4",
    "reuses-request-id": "basic/index#6",
    "cancels-unknown-request": "basic/utilities/cancellation#1",
    "progress-token-object": "basic/utilities/progress#1",
    "initialize-without-client-info": "basic/lifecycle#2",
    "tool-use-with-choice-none": "client/sampling#10",
    # what a client did not declare: answered, or refused with the wrong code
    "answers-roots-undeclared": "client/roots#1",
    "roots-undeclared-wrong-code": "client/roots#4",
    "answers-sampling-undeclared": "client/sampling#5",
    "answers-elicitation-undeclared": "client/elicitation#4",
    # refuses the elicitation it did not declare as if the request were malformed (-32600), not with the
    # code elicitation names for an undeclared mode (-32602) or Method not found
    "elicitation-undeclared-invalid-request": "client/elicitation#34",
    # the lifecycle, JSON-RPC and the transport
    "unknown-protocol-version": "basic/lifecycle#7",
    "cancels-initialize": "basic/utilities/cancellation#2",
    "notification-with-id": "basic/index#14",
    "request-id-null": "basic/index#5",
    "writes-latin-1": "basic/transports#1",
    # logging/setLevel with a level LoggingLevel does not have (trial30c D7, setlevelbad)
    "set-level-invalid": "basic/index#1",
    # a refusal with a code sampling does not list
    "sampling-refused-code-zero": "client/sampling#13",
}
#: variants that leave the fixture waiting (the rule the silence breaks): the check still ends
#: within the user's bounds (--timeout, --client-timeout), with a report
HANGS = {
    "stops-answering": "basic/utilities/ping#1",  # initializes, then answers nothing the server asks
    "says-nothing": "basic/lifecycle#2",  # starts the server and never writes a byte
    "never-leaves": "basic/utilities/ping#1",  # as stops-answering, and stays when the server has gone
}
#: variants that bend nothing the spec requires
CORRECT = {
    "none": "the client as it should be",
    "declines": "declines every sampling and elicitation request (allowed)",
    "with-tools": "declares sampling.tools and carries the tool loop to its end",
    "declines-everything": "declares no roots (answers -32601) and declines every sampling and elicitation request",
    # (trial30c D8: the Python SDK client) no statement names the code of a refused undeclared sampling;
    # -32602 is what elicitation names for an undeclared mode
    "undeclared-odd-codes": "declares neither sampling nor elicitation; refuses sampling -32600, elicitation -32602",
}
#: a correct client that takes its time: each answer SLOW_ANSWER seconds late (a cancelled request
#: is not answered); kept out of CORRECT (the corpus runs would wait for it) for the bounds' control
SLOW = {"answers-slowly": "answers every request SLOW_ANSWER seconds late"}
SLOW_ANSWER = 1.0


class Client:
    def __init__(self, brk: str, server: list[str]) -> None:
        self.brk = brk
        self.proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lock = threading.Lock()
        self.next_id = 0
        #: (answers-slowly) the answers not yet sent, by request id
        self.late: dict[Any, threading.Timer] = {}

    def write(self, message: Any) -> None:
        data = json.dumps(message).encode() + b"\n"
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def request(self, method: str, params: Any = None, rid: Any = None) -> Any:
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.write(message)
        return rid

    def read(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            return None
        return json.loads(line)

    def wait_for(self, rid: Any) -> Any:
        while (message := self.read()) is not None:
            if message.get("id") == rid and "method" not in message:
                return message
            self.answer(message)
        return None

    def capabilities(self) -> dict[str, Any]:
        sampling: dict[str, Any] = {"tools": {}} if self.brk in ("with-tools", "tool-use-with-choice-none") else {}
        caps: dict[str, Any] = {"sampling": sampling, "elicitation": {"form": {}}, "roots": {"listChanged": True}}
        if self.brk in ("answers-roots-undeclared", "roots-undeclared-wrong-code", "declines-everything"):
            del caps["roots"]
        if self.brk == "answers-sampling-undeclared":
            del caps["sampling"]
        if self.brk in ("answers-elicitation-undeclared", "elicitation-undeclared-invalid-request"):
            del caps["elicitation"]
        if self.brk == "undeclared-odd-codes":
            del caps["sampling"], caps["elicitation"]
        return caps

    def run(self) -> None:
        if self.brk == "says-nothing":
            while self.read() is not None:
                pass  # until the server leaves
            return
        info = {"name": "corpus-client", "version": "1"}
        version = "2099-01-01" if self.brk == "unknown-protocol-version" else "2025-11-25"
        params: dict[str, Any] = {"protocolVersion": version, "capabilities": self.capabilities()}
        if self.brk != "initialize-without-client-info":
            params["clientInfo"] = info
        if self.brk == "writes-a-log-line":
            with self.lock:
                assert self.proc.stdin is not None
                self.proc.stdin.write(b"corpus client starting\n")
                self.proc.stdin.flush()
        rid = self.request("initialize", params)
        if self.brk == "cancels-initialize":
            self.write({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
        answer = self.wait_for(rid)
        if answer is None or "result" not in answer:
            return
        if self.brk == "request-before-initialized":
            self.wait_for(self.request("tools/list"))
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if self.brk == "reuses-request-id":
            self.wait_for(self.request("tools/list", rid=42))
            self.wait_for(self.request("tools/list", rid=42))
        if self.brk == "cancels-unknown-request":
            self.write({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}})
        if self.brk == "set-level-invalid":
            self.wait_for(self.request("logging/setLevel", {"level": "verbose"}))
        if self.brk == "progress-token-object":
            self.wait_for(self.request("tools/list", {"_meta": {"progressToken": {"not": "valid"}}}))
        if self.brk == "notification-with-id":
            self.write({"jsonrpc": "2.0", "id": 77, "method": "notifications/roots/list_changed"})
        if self.brk == "request-id-null":
            self.write({"jsonrpc": "2.0", "id": None, "method": "ping"})
        if self.brk == "writes-latin-1":
            data = {
                "jsonrpc": "2.0",
                "method": "notifications/roots/list_changed",
                "params": {"_meta": {"x": "caf\u00e9"}},
            }
            with self.lock:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps(data, ensure_ascii=False).encode("latin-1") + b"\n")
                self.proc.stdin.flush()
        # answer the server until it ends the session
        while (message := self.read()) is not None:
            self.answer(message)

    def answer(self, message: dict[str, Any]) -> None:
        method, rid = message.get("method"), message.get("id")
        if self.brk == "answers-slowly" and threading.current_thread() is threading.main_thread():
            if method == "notifications/cancelled":
                timer = self.late.pop((message.get("params") or {}).get("requestId"), None)
                if timer is not None:
                    timer.cancel()
            elif method is not None and rid is not None:
                self.late[rid] = threading.Timer(SLOW_ANSWER, self.answer, (message,))
                self.late[rid].start()
            return
        if method is None or rid is None or self.brk in ("stops-answering", "never-leaves"):
            return  # a notification, or an answer we do not wait for (or nothing is answered)
        params = message.get("params") or {}
        if self.brk == "answers-with-another-id":
            rid = f"{rid}-other"
        if method == "ping":
            self.result(rid, {"pong": True} if self.brk == "ping-not-empty" else {})
        elif method == "roots/list" and self.brk == "roots-undeclared-wrong-code":
            self.error(rid, -32603, "no roots here")
        elif method == "roots/list" and "roots" not in self.capabilities() and self.brk != "answers-roots-undeclared":
            self.error(rid, -32601, "Method not found: roots/list")
        elif method == "roots/list":
            uri = "https://example.com/work" if self.brk == "root-not-file" else "file:///work"
            self.result(rid, {"roots": [{"uri": uri, "name": "work"}]})
        elif method == "sampling/createMessage" and "sampling" not in self.capabilities():
            if self.brk == "answers-sampling-undeclared":
                self.sample(rid, params)
            elif self.brk == "undeclared-odd-codes":
                self.error(rid, -32600, "Sampling not supported")
            else:
                self.error(rid, -32601, "Method not found: sampling/createMessage")
        elif method == "elicitation/create" and "elicitation" not in self.capabilities():
            if self.brk == "answers-elicitation-undeclared":
                self.result(rid, {"action": "decline"})
            elif self.brk == "elicitation-undeclared-invalid-request":
                self.error(rid, -32600, "Elicitation not supported")
            elif self.brk == "undeclared-odd-codes":
                self.error(rid, -32602, "Invalid params: no elicitation mode declared")
            else:
                self.error(rid, -32601, "Method not found: elicitation/create")
        elif method == "sampling/createMessage":
            self.sample(rid, params)
        elif method == "elicitation/create":
            self.elicit(rid, params)
        else:
            code: Any = -32603 if self.brk == "unknown-method-code" else -32601
            self.error(rid, code, f"Method not found: {method}")

    def sample(self, rid: Any, params: dict[str, Any]) -> None:
        if self.brk in ("declines", "declines-everything"):
            self.error(rid, -1, "the user rejected the request")
            return
        if self.brk == "sampling-refused-code-zero":
            self.error(rid, 0, "no")
            return
        tools = params.get("tools")
        declared = "tools" in self.capabilities().get("sampling", {})
        if tools and not declared and self.brk != "answers-tools-without-capability":
            self.error(rid, -32602, "tools need the sampling.tools capability")
            return
        choice = (params.get("toolChoice") or {}).get("mode", "auto")
        last = params["messages"][-1]["content"]
        answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        if tools and not answered and (choice != "none" or self.brk == "tool-use-with-choice-none"):
            use = {"type": "tool_use", "id": "use-1", "name": tools[0]["name"], "input": {"city": "Oslo"}}
            self.result(rid, {"role": "assistant", "model": "corpus", "content": [use], "stopReason": "toolUse"})
            return
        text = {"type": "text", "text": "hello"}
        self.result(rid, {"role": "assistant", "model": "corpus", "content": text, "stopReason": "endTurn"})

    def elicit(self, rid: Any, params: dict[str, Any]) -> None:
        if params.get("mode") == "url" and self.brk != "answers-undeclared-url-mode":
            self.error(rid, -32602, "URL mode was not declared")
            return
        if self.brk in ("declines", "declines-everything"):
            self.result(rid, {"action": "decline"})
            return
        if params.get("mode") == "url":
            self.result(rid, {"action": "accept"})
            return
        content: dict[str, Any] = {"name": 42} if self.brk == "form-answer-breaks-schema" else {"name": "Ada"}
        self.result(rid, {"action": "accept", "content": content})

    def result(self, rid: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: Any, message: str) -> None:
        if self.brk == "error-code-string":
            code = str(code)
        self.write({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="brk", default="none", choices=[*BREAKS, *HANGS, *CORRECT, *SLOW])
    parser.add_argument("server", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    server = args.server[1:] if args.server[:1] == ["--"] else args.server
    client = Client(args.brk, server)
    try:
        client.run()
        while args.brk == "never-leaves":
            time.sleep(1)  # until stopped
    finally:
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        client.proc.wait(timeout=30)


if __name__ == "__main__":
    main()
    sys.exit(0)
