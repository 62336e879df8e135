"""One observer per session: the HTTP tap, and ``judge`` on its log, judge each session on its own.

A tap in front of a Streamable HTTP server sees the exchanges of every client that uses it,
interleaved. Each 2025 session (its ``MCP-Session-Id``) is its own JSON-RPC connection: its own
initialize, its own request ids. So each gets an :class:`~.observer.Observer` of its own, and two
sessions that both initialize, or both number their requests from 0, break nothing. A finding
made in a session names the session in its evidence (``MCP-Session-Id: ...``).

How an exchange finds its observer, the same live (the tap) and on replay (``judge`` reading the
tap's log, where each record carries its exchange's number ``"x"``):

* a request that carries ``MCP-Session-Id`` goes to that session's observer (a new one when the
  tap did not see the session begin);
* a POST without one that holds initialize gets a new observer; when the head of its answer names
  a session id, that observer is the session's from then on, else it judges the traffic without
  sessions;
* anything else without a session id (a 2026-07-28 request, the requests to a server that gives
  no session ids) goes to the observer of the traffic without sessions;
* what the answer carries (its JSON body, the events of its stream) goes to the observer of the
  exchange it answers.

Stdio, and logs without exchange numbers, have one connection: everything goes to one observer.
Sans-IO, like the observer.
"""

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from .observer import Direction, Observer, Transport
from .report import Finding, Report

__all__ = ["Sessions", "SESSION_MARK", "report_of"]

#: how a finding's evidence names the session that showed it
SESSION_MARK = "MCP-Session-Id: "


def _holds_initialize(posted: Any) -> bool:
    items = posted if isinstance(posted, list) else [posted]
    return any(isinstance(m, dict) and m.get("method") == "initialize" and "id" in m for m in items)


class Sessions:
    """The observers of one tapped connection or HTTP endpoint, one per session (see the module doc)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        #: judges what carries no session id (and, over stdio, everything)
        self.sessionless = Observer(transport=transport)
        #: every observer, in the order they were made
        self.observers: list[Observer] = [self.sessionless]
        self._by_session: dict[str, Observer] = {}
        self._by_exchange: dict[int, Observer] = {}
        #: exchanges of an initialize without a session id, until the head of their answer
        self._opening: dict[int, Observer] = {}
        #: id(observer) -> the session id it judges
        self._names: dict[int, str] = {}

    def _new(self) -> Observer:
        obs = Observer(transport=self.transport)
        self.observers.append(obs)
        return obs

    def _begin(self, exchange: int, session: str | None, posted: Any) -> Observer:
        obs = self._by_exchange.get(exchange)
        if obs is not None:
            return obs
        if session is not None:
            obs = self._by_session.get(session)
            if obs is None:
                # a session whose beginning the tap did not see
                obs = self._by_session[session] = self._new()
                self._names[id(obs)] = session
        elif _holds_initialize(posted):
            obs = self._opening[exchange] = self._new()
        else:
            obs = self.sessionless
        self._by_exchange[exchange] = obs
        return obs

    def sent(self, exchange: int | None, headers: Mapping[str, str] | None, data: bytes) -> Observer:
        """The observer of a message (``data``) the client sent in ``exchange`` (None: the only connection)."""
        if exchange is None:
            return self.sessionless
        try:
            posted = json.loads(data)
        except ValueError:
            posted = None
        lowered = {k.lower(): v for k, v in (headers or {}).items()}
        return self._begin(exchange, lowered.get("mcp-session-id"), posted)

    def step(self, step: Mapping[str, Any]) -> None:
        """One step of an HTTP exchange, as the tap logs it (``{"http": kind, "x": n, ...}``)."""
        exchange = step.get("x")
        if not isinstance(exchange, int):
            return
        kind = step.get("http")
        if kind == "head":
            session = step.get("session")
            self._begin(exchange, session if isinstance(session, str) else None, step.get("posted"))
            obs = self._opening.pop(exchange, None)
            headers = step.get("headers")
            named = headers.get("mcp-session-id") if isinstance(headers, dict) else None
            if obs is not None:
                if isinstance(named, str) and named not in self._by_session:
                    self._by_session[named] = obs
                    self._names[id(obs)] = named
                else:
                    self.sessionless = obs  # a server without sessions: the traffic without ids is this one's
        elif kind == "end":
            self.forget(exchange)

    def forget(self, exchange: int) -> None:
        """``exchange`` is over, whether or not its end was seen (a connection that broke off)."""
        self._opening.pop(exchange, None)
        self._by_exchange.pop(exchange, None)

    def received(self, exchange: int | None) -> Observer:
        """The observer of a message the server sent in answer to ``exchange``."""
        if exchange is None:
            return self.sessionless
        return self._by_exchange.get(exchange, self.sessionless)

    def revision_of(self, exchange: int | None) -> str | None:
        return self.received(exchange).revision

    def session_of(self, obs: Observer) -> str | None:
        return self._names.get(id(obs))

    def named(self, obs: Observer, findings: list[Finding]) -> list[Finding]:
        """``findings`` of ``obs``, each naming its session in its evidence."""
        session = self.session_of(obs)
        if session is None:
            return findings
        mark = SESSION_MARK + session
        return [f if mark in f.evidence else attrs.evolve(f, evidence=(*f.evidence, mark)) for f in findings]

    def end(self) -> list[Finding]:
        """The traffic is over: what each observer finds only at the end (named)."""
        out: list[Finding] = []
        for obs in self.observers:
            for direction in Direction:
                out += self.named(obs, obs.flush(direction))
            out += self.named(obs, obs.end())
        return out

    def findings(self) -> Iterator[Finding]:
        for obs in self.observers:
            yield from self.named(obs, obs.findings)

    @property
    def revisions(self) -> list[str]:
        return list(dict.fromkeys(r for obs in self.observers for r in obs.revisions))

    @property
    def revision(self) -> str | None:
        return next((obs.revision for obs in self.observers if obs.revision is not None), None)

    @property
    def notes(self) -> list[str]:
        return list(dict.fromkeys(n for obs in self.observers for n in obs.notes))

    def count(self, direction: Direction) -> int:
        return sum(obs.count[direction] for obs in self.observers)


def report_of(
    target: str,
    sessions: Sessions,
    transport_findings: list[Finding],
    traffic: list[tuple[Direction, bytes]],
    on_finding: Callable[[list[Finding]], None] = lambda findings: None,
) -> Report:
    """The report on traffic judged by ``sessions`` (the tap's, and ``judge``'s on its log)."""
    on_finding(sessions.end())
    revisions = sessions.revisions
    report = Report(target, sessions.revision)
    # (the line is for traffic of several revisions: one is the "protocol revision" line already)
    report.revisions = revisions if len(revisions) > 1 else []
    for direction, data in traffic:
        report.record(1, direction.value, data)
    report.extend(transport_findings)
    report.extend(sessions.findings())
    report.notes.extend(sessions.notes)
    tapped = [obs for obs in sessions.observers if any(obs.count.values())]
    if len(tapped) > 1:
        report.notes.append(f"{len(tapped)} sessions (or session-less streams of traffic), each judged on its own")
    up, down = sessions.count(Direction.TO_SERVER), sessions.count(Direction.TO_CLIENT)
    report.notes.append(f"{up} message(s) from the client, {down} from the server")
    return report
