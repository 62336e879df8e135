"""What Streamable HTTP answers say (basic/transports#streamable-http), judged one way everywhere.

:class:`HttpJudge` is fed the HTTP exchanges of one client -- the head of each
answer, the SSE events it carries, its end -- and returns findings. The
battery's raw channel (:mod:`.http_probe`) and the tap (:mod:`.http_tap`)
use the same judge, so ``check`` and ``tap`` give the same verdict on the
same traffic (spec_notes/crosscheck.md). Sans-IO: no trio here.

* #21: a POSTed request is answered with ``application/json`` or
  ``text/event-stream`` -- not 202, not another content type;
* #18: a POSTed notification or response is answered 202, with no body;
* #39: a GET is answered with an SSE stream, or 405;
* #57 / #56: session ids are visible ASCII, and not guessable;
* #50: an SSE event id is used once across all the streams of a session;
* #23: an SSE stream begins with a priming event (an id, empty data);
* #32: an SSE stream ends once it has carried the response.
"""

import json
import re
from typing import Any, Final

from .report import Finding

__all__ = ["judge_step", "HttpJudge", "posted_kind"]

_JSON: Final = "application/json"
_SSE: Final = "text/event-stream"
#: a session id shorter than this, or all digits, can be guessed (transports#56)
_SHORT_ID: Final = 16
_VISIBLE_ASCII: Final = re.compile(r"^[\x21-\x7e]+$")
#: the revisions whose SSE streams answering a request begin with a priming event (transports#23)
_PRIMING_REVISIONS: Final = frozenset({"2025-11-25"})


def posted_kind(body: bytes) -> tuple[bool, Any, list[Any]]:
    """(holds a request, the JSON posted or None, the ids of the requests in it)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False, None, []
    items = message if isinstance(message, list) else [message]
    # (an id of null makes no MCP request, basic/index#5: its answer is judged by JSON-RPC, not here)
    ids = [m.get("id") for m in items if isinstance(m, dict) and "method" in m and m.get("id") is not None]
    return bool(ids), message, ids


def _accepted_kind(posted: Any) -> bool:
    """Whether ``posted`` is a well-formed notification or response (what #18 is about)."""
    items = posted if isinstance(posted, list) else [posted]
    for m in items:
        if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
            return False
        notification = isinstance(m.get("method"), str) and "id" not in m
        response = "method" not in m and ("result" in m or "error" in m) and m.get("id") is not None
        if not (notification or response):
            return False
    return bool(items)


def _kind(content_type: str) -> str:
    return content_type.split(";")[0].strip().lower()


class HttpJudge:
    """The transport rules one client's HTTP exchanges show (see the module doc)."""

    def __init__(self) -> None:
        #: session id (or None without sessions) -> SSE event ids seen on its streams
        self._event_ids: dict[str | None, set[str]] = {}
        self._session_ids: set[str] = set()
        #: the revision the exchanges speak (the priming event is asked for in 2025-11-25 only)
        self.revision: str | None = None

    def head(
        self,
        method: str,
        status: int,
        content_type: str,
        headers: dict[str, str],
        *,
        is_request: bool,
        posted: Any,
    ) -> list[Finding]:
        """The status, content type and headers of one answer."""
        out: list[Finding] = []
        kind = _kind(content_type)
        if method == "POST" and is_request and status == 202:
            # [basic/transports#21] a request gets its answer (JSON or SSE), not "accepted"
            text = "a POSTed request was answered HTTP 202 Accepted, with no answer"
            out.append(Finding.of("basic/transports#21", text, posted, party="server"))
        elif method == "POST" and is_request and 200 <= status < 300 and kind not in (_JSON, _SSE):
            # [basic/transports#21] a request gets JSON or an SSE stream
            text = f"a POSTed request was answered with content type {kind or '(none)'!r}"
            out.append(Finding.of("basic/transports#21", text, posted, party="server"))
        if method == "POST" and _accepted_kind(posted) and not is_request and 200 <= status < 300 and status != 202:
            # [basic/transports#18] a notification or response that is accepted gets 202 Accepted
            text = f"a POSTed notification or response was answered HTTP {status}, not 202"
            out.append(Finding.of("basic/transports#18", text, posted, party="server"))
        if method == "GET" and status < 400 and not (status == 200 and kind == _SSE):
            # [basic/transports#39] a GET gets an SSE stream or 405 (errors such as 400, 404 are another matter)
            text = f"a GET was answered HTTP {status} {kind}".rstrip()
            out.append(Finding.of("basic/transports#39", text, party="server"))
        session = headers.get("mcp-session-id")
        if session is not None and session not in self._session_ids:
            self._session_ids.add(session)
            out += self._session_id(session)
        return out

    def _session_id(self, session: str) -> list[Finding]:
        evidence = f"MCP-Session-Id: {session}"
        if not _VISIBLE_ASCII.match(session):
            # [basic/transports#57] visible ASCII only (0x21 to 0x7E)
            text = "the session id has characters outside visible ASCII"
            return [Finding.of("basic/transports#57", text, evidence, party="server")]
        if len(session) < _SHORT_ID or session.isdigit():
            # [basic/transports#56] a session id someone else cannot guess
            text = f"the session id {session!r} can be guessed (short, or a number)"
            return [Finding.of("basic/transports#56", text, evidence, party="server")]
        return []

    def event(self, session: str | None, event_id: str | None, data: str | None) -> list[Finding]:
        """One SSE event of a stream of ``session``."""
        if event_id is None or event_id == "":
            return []
        seen = self._event_ids.setdefault(session, set())
        if event_id in seen:
            # [basic/transports#50] an event id names one event across the session's streams
            text = f"the SSE event id {event_id!r} was used twice in the session"
            return [Finding.of("basic/transports#50", text, f"id: {event_id}", party="server")]
        seen.add(event_id)
        return []

    def end(
        self,
        method: str,
        status: int,
        content_type: str,
        body: bytes,
        *,
        is_request: bool,
        first_event: tuple[str | None, str | None] | None,
        posted: Any = None,
        answered: bool | None = None,
    ) -> list[Finding]:
        """The whole answer was read: its body (not SSE) and the first event of its stream (SSE).
        ``answered``: (SSE) whether the stream carried the response (None: not known)."""
        out: list[Finding] = []
        if answered is False and is_request and status == 200 and _kind(content_type) == _SSE:
            # [basic/transports#28] the stream answering a request carries its response (a last event
            # not ended by a blank line is never dispatched: SSE readers drop it)
            text = "the SSE stream answering a request ended without its response"
            out.append(Finding.of("basic/transports#28", text, posted, party="server"))
        if method == "POST" and status == 202 and body.strip():
            # [basic/transports#18] 202 Accepted, with no body
            text = "a 202 answer carried a body"
            out.append(Finding.of("basic/transports#18", text, body.decode("utf-8", "replace"), party="server"))
        if method == "POST" and is_request and 200 <= status < 300 and _kind(content_type) == _JSON:
            if body.strip().startswith(b"["):
                # [basic/transports#21] a request is answered with ONE JSON object (no batches since 2025-06-18)
                text = "a request was answered with a JSON array, not one JSON object"
                out.append(
                    Finding.of("basic/transports#21", text, body.decode("utf-8", "replace")[:300], party="server")
                )
        # (not for initialize: the server cannot know yet whether the client takes priming events)
        initialize = isinstance(posted, dict) and posted.get("method") == "initialize"
        # (2026-07-28 has no event ids and no resumption: its streams have no priming event either)
        primed = self.revision in _PRIMING_REVISIONS and not initialize
        if primed and method == "POST" and is_request and _kind(content_type) == _SSE and status == 200:
            event_id, data = first_event if first_event is not None else (None, None)
            if not event_id or data not in (None, ""):
                # [basic/transports#23] the stream begins with an event id and empty data
                text = "the SSE stream answering a request did not begin with a priming event (an id, empty data)"
                shown = f"first event: id {event_id!r}, data {(data or '')[:80]!r}"
                out.append(Finding.of("basic/transports#23", text, shown, party="server"))
        return out

    def still_open(self, posted: Any) -> list[Finding]:
        """An SSE stream went on after it carried the response to its request."""
        # [basic/transports#32] the stream ends once the response is sent
        text = "the SSE stream stayed open after it carried the response"
        return [Finding.of("basic/transports#32", text, posted, party="server")]


def judge_step(judge: HttpJudge, step: dict[str, Any]) -> list[Finding]:
    """Judge one step of an HTTP exchange as the tap logged it (``{"http": kind, ...}``): the tap
    judges every step through here, and ``mcp-ref judge`` replays the log through here too."""
    kind = step.get("http")
    posted = step.get("posted")
    if kind == "head":
        headers = step.get("headers")
        return judge.head(
            str(step.get("method")),
            int(step.get("status") or 0),
            str(step.get("content_type") or ""),
            headers if isinstance(headers, dict) else {},
            is_request=bool(step.get("is_request")),
            posted=posted,
        )
    if kind == "event":
        session, event_id, data = step.get("session"), step.get("id"), step.get("data")
        return judge.event(
            session if isinstance(session, str) else None,
            event_id if isinstance(event_id, str) else None,
            data if isinstance(data, str) else None,
        )
    if kind == "end":
        revision, first = step.get("revision"), step.get("first")
        judge.revision = revision if isinstance(revision, str) else None
        return judge.end(
            str(step.get("method")),
            int(step.get("status") or 0),
            str(step.get("content_type") or ""),
            str(step.get("body") or "").encode("utf-8", "surrogateescape"),
            is_request=bool(step.get("is_request")),
            first_event=(first[0], first[1]) if isinstance(first, list) and len(first) == 2 else None,
            posted=posted,
        )
    if kind == "still-open":
        return judge.still_open(posted)
    return []
