"""basic/utilities/progress: tokens, increasing values, and the rate limit (sans-IO).

The engine (:class:`~mcp_ref.connection.Connection`) keeps one
:class:`ProgressTokens` per connection and asks it when a request asks for
progress, when a notification arrives and when a request or a task ends; the
trio session (:mod:`mcp_ref.session.core`) paces its handlers' notifications
with a :class:`ProgressPace` per request. Nothing here has a clock: times are
passed in.

* Tokens (progress#1, #2): strings or integers, unique among the active
  requests of the session. A generated token is the request's own id (unique
  by construction), unless the caller already chose that value for another
  request: :meth:`ProgressTokens.generate`.
* Values (#4): every notification's ``progress`` is above the previous one;
  ``progress`` and ``total`` are finite numbers: :func:`check_progress`.
* Lifetime (#7, #9-#11, #14): a token is valid while its request is active;
  for a task-augmented request, until the task is terminal. Notifications for
  unknown or finished tokens are ignored (with the reason), and we send none
  after the response or the terminal status.
* Rate limit (#13): :class:`ProgressPace` decides whether a value goes out now,
  is held back (the newest one is sent when the interval ends), or is dropped.
"""

import math
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal, Protocol

from ...errors import ErrorCode, LocalProtocolError
from ...schema.jsonrpc import ProgressToken, RequestId
from ..jsonrpc import is_valid_id
from .cancellation import remember

__all__ = [
    "ProgressCallback",
    "check_progress",
    "is_final",
    "valid_token",
    "ProgressTokens",
    "IGNORED_REQUIREMENT",
    "ProgressPace",
    "SEND",
    "HOLD",
    "HOLD_FIRST",
    "DROP",
]

#: what a requestor's progress callback receives: progress, total, message
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


def valid_token(token: Any) -> bool:
    """[basic/utilities/progress#1] a progress token is a string or an integer."""
    return is_valid_id(token)


def is_final(progress: float, total: float | None) -> bool:
    """The value reaches the announced total (a rate limit always lets it through)."""
    return total is not None and progress >= total


def check_progress(progress: Any, total: Any, last: float | None) -> None:
    """LocalProtocolError unless ``progress`` (and ``total``) are finite numbers and
    ``progress`` is above ``last``."""
    for value in (progress, total):
        if value is not None and (type(value) not in (int, float) or not math.isfinite(value)):
            # JSON has no NaN or infinity
            raise LocalProtocolError(f"progress and total are finite numbers, not {value!r}", ErrorCode.INVALID_PARAMS)
    if progress is None:
        raise LocalProtocolError("progress is required", ErrorCode.INVALID_PARAMS)
    if last is not None and not progress > last:
        # [basic/utilities/progress#4] the value increases with every notification
        raise LocalProtocolError(
            f"progress must increase: {progress!r} after {last!r}",
            ErrorCode.INVALID_PARAMS,
            requirement="basic/utilities/progress#4",
        )


#: why :meth:`ProgressTokens.received` ignores a notification -> the requirement its sender broke
IGNORED_REQUIREMENT: Final = {
    "unknown token": "basic/utilities/progress#7",
    "after completion": "basic/utilities/progress#14",
    "not increasing": "basic/utilities/progress#4",
}


class Tracked(Protocol):
    """One of our requests as :meth:`ProgressTokens.received` sees it."""

    last_progress: float | None


class ProgressTokens:
    """The progress tokens of one connection, both directions.

    ``active``: token -> id of our request that asked for progress under it;
    ``finished``: tokens of ours that ended (the newest few, to tell progress
    after completion from an unknown token); ``tasks_ours``: token -> [id of
    the request that created the task, last value] while a task the peer runs
    for us is not terminal (#9, #10); ``tasks_theirs``: token -> last value we
    sent, while a task we run for the peer is not terminal (#11).
    """

    __slots__ = ("active", "finished", "tasks_ours", "tasks_theirs")

    def __init__(self) -> None:
        self.active: dict[ProgressToken, RequestId] = {}
        self.finished: OrderedDict[ProgressToken, None] = OrderedDict()
        self.tasks_ours: dict[ProgressToken, list[Any]] = {}
        self.tasks_theirs: dict[ProgressToken, float | None] = {}

    # -- our requests ----------------------------------------------------------------

    def in_use(self, token: ProgressToken) -> bool:
        return token in self.active or token in self.tasks_ours

    def generate(self, rid: int) -> ProgressToken:
        """A token for our request ``rid``: its id, unless a caller took that value."""
        token: ProgressToken = rid
        n = 0
        while self.in_use(token):
            n += 1
            token = f"mcp_ref-progress-{rid}-{n}"
        return token

    def check_chosen(self, token: Any) -> ProgressToken:
        """A token the caller chose: LocalProtocolError unless valid and free."""
        if not valid_token(token):
            # [basic/utilities/progress#1] tokens are strings or integers
            raise LocalProtocolError(
                "a progress token must be a string or an integer",
                ErrorCode.INVALID_PARAMS,
                requirement="basic/utilities/progress#1",
            )
        if self.in_use(token):
            # [basic/utilities/progress#2] unique across active requests, and a
            # running task keeps its request's token (progress#9)
            raise LocalProtocolError(
                f"progress token {token!r} is already in use by an active request or task",
                requirement="basic/utilities/progress#2",
            )
        token_: ProgressToken = token
        return token_

    def release(self, token: ProgressToken, rid: RequestId) -> None:
        """Our request ``rid`` ended (answered, cancelled, abandoned): its token is done."""
        if self.active.get(token) == rid:
            # [basic/utilities/progress#12] the token is no longer active -- progress#implementation-notes
            del self.active[token]
            remember(self.finished, token)

    def answered(self, token: ProgressToken, rid: RequestId, task: bool, last: float | None) -> None:
        """Our request ``rid`` was answered; a task-augmented one keeps its token for the task."""
        if task and self.active.get(token) == rid:
            # [basic/utilities/progress#9] the token stays valid until the task is terminal;
            # the tasks runtime calls release_task then
            del self.active[token]
            self.tasks_ours[token] = [rid, last]
        else:
            self.release(token, rid)

    def release_task(self, token: ProgressToken) -> None:
        """Our task under ``token`` is terminal (or was never created): later progress is ignored."""
        if self.tasks_ours.pop(token, None) is not None:
            remember(self.finished, token)

    def received(
        self, token: ProgressToken, value: float, outgoing: Mapping[RequestId, Tracked]
    ) -> tuple[RequestId | None, str | None]:
        """A progress notification from the peer: (the request it is for, None), or
        (None, why it is ignored). ``outgoing``: our requests in flight, by id."""
        rid = self.active.get(token)
        if rid is None:
            task = self.tasks_ours.get(token)
            if task is None:
                # [basic/utilities/progress#7] only tokens of active requests
                return None, ("after completion" if token in self.finished else "unknown token")
            # [basic/utilities/progress#9, #10] a task's progress, under its request's token
            if task[1] is not None and not value > task[1]:
                return None, "not increasing"
            task[1] = value
            task_rid: RequestId = task[0]
            return task_rid, None
        req = outgoing[rid]
        if req.last_progress is not None and not value > req.last_progress:
            return None, "not increasing"  # [basic/utilities/progress#4]
        req.last_progress = value
        return rid, None

    # -- the peer's tasks, which we run -------------------------------------------------

    def task_started(self, token: ProgressToken, last: float | None) -> None:
        """We answered a task-augmented request with ``token``: the task's progress goes on under it."""
        self.tasks_theirs[token] = last

    def task_last(self, token: ProgressToken) -> float | None:
        """The last value sent under a running task's ``token``; LocalProtocolError if none runs."""
        tasks = self.tasks_theirs
        if token not in tasks:
            # [basic/utilities/progress#11] no progress once the task is terminal
            raise LocalProtocolError(
                f"progress token {token!r} belongs to no running task", requirement="basic/utilities/progress#11"
            )
        return tasks[token]

    def task_finished(self, token: ProgressToken) -> None:
        """The task we run under ``token`` is terminal: no more progress under it."""
        self.tasks_theirs.pop(token, None)


#: what :meth:`ProgressPace.offer` decides
SEND: Final = "send"
HOLD: Final = "hold"
HOLD_FIRST: Final = "hold-first"  # held, and nothing was held before: schedule a flush at flush_at
DROP: Final = "drop"
Decision = Literal["send", "hold", "hold-first", "drop"]


class ProgressPace:
    """[basic/utilities/progress#13] the rate limit of one request's (or one task's) notifications.

    At most one notification per ``interval`` seconds; a value that reaches
    ``total`` always goes out. Inside the interval, with ``coalesce`` the newest
    value is held (``held``) and sent when the interval ends (:attr:`flush_at`)
    or just before the response; without it, it is dropped. ``dropped`` counts
    the values reported and never sent; ``reported`` is the last value the
    handler reported (sent or not), against which increase is checked.
    """

    __slots__ = ("coalesce", "dropped", "held", "interval", "reported", "sent_at")

    def __init__(self, interval: float, coalesce: bool = True) -> None:
        self.interval = interval
        self.coalesce = coalesce
        self.sent_at: float | None = None
        self.reported: float | None = None
        self.held: tuple[float, float | None, str | None] | None = None
        self.dropped = 0

    def offer(self, progress: float, total: float | None, message: str | None, now: float) -> Decision:
        """A value reported at ``now``: send it, hold it (the first held value needs a
        flush scheduled at :attr:`flush_at`) or drop it."""
        interval = self.interval
        if not interval:
            return SEND  # no limit: the engine checks the value as it encodes it
        # [basic/utilities/progress#4] with a rate limit some values are never sent:
        # check against what the handler reported
        check_progress(progress, total, self.reported)
        sent_at = self.sent_at
        if sent_at is not None and now - sent_at < interval and not is_final(progress, total):
            # [basic/utilities/progress#13] rate limited: not sent now
            self.reported = progress
            self.dropped += 1
            if not self.coalesce:
                return DROP
            first = self.held is None
            self.held = (progress, total, message)
            return HOLD_FIRST if first else HOLD
        self.held = None
        return SEND

    @property
    def flush_at(self) -> float:
        """When a held value goes out (the end of the current interval)."""
        assert self.sent_at is not None
        return self.sent_at + self.interval

    def sent(self, progress: float, now: float, delivered: bool) -> None:
        """``progress`` went through the engine at ``now`` (``delivered``: a notification
        was written; False when the requestor asked for none)."""
        self.reported = progress
        if delivered:
            self.sent_at = now

    def take_held(self) -> tuple[float, float | None, str | None] | None:
        held = self.held
        self.held = None
        return held
