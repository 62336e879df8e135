"""URL-mode elicitation on the server, bound to the user who started it (client/elicitation).

::

    pending = URLElicitations("https://mcp.example/connect")   # mcp_ref.client.url_elicitations

    @server.tool()
    async def connect_github(ctx, arguments):
        params = pending.start(ctx, "Connect your GitHub account")  # bound to ctx.auth's user
        await ctx.session.elicit(params)                            # the client offers the URL
        ...

    # later, in the web application serving https://mcp.example/connect?elicitation_id=...,
    # once it has authenticated the person who opened the page (its own login):
    await pending.complete(elicitation_id, user=(issuer, subject))

The state of an out-of-band interaction belongs to a *user*, as the server
knows them from the verified token (``ctx.auth``: issuer and subject), never
to a session id or to anything the client says about who it is
(client/elicitation#24-#27, #53). The completion is accepted only from that
same user (#58, #59): the elicitation id in the URL is random and bound here,
on the server, so changing the URL cannot hand the interaction to someone
else (#60). The notification of completion goes to the session (the client)
that started it (#35).

In 2026-07-28 there is no session and no completion notification: the tool keeps
the id in ``ctx.state`` and, when the client retries, asks :meth:`completed`::

    @server.tool()
    async def connect_github(ctx, arguments):
        if "eid" not in ctx.state:
            params = pending.start(ctx, "Connect your GitHub account")
            ctx.state["eid"] = params.elicitation_id
            await ctx.elicit(params)              # the client is shown the URL; the handler stops here
        if not pending.completed(ctx, ctx.state["eid"]):
            raise ToolError("not connected yet: finish in the browser, then ask again")
        ...
"""

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

import attrs

from ..basic.versioning import Era, era_of
from ..schema.elicitation import ElicitationCompleteNotificationParams, ElicitRequestURLParams

__all__ = ["URLElicitations", "PendingURLElicitation", "User"]

#: who a person is: (issuer, subject) of a verified token, or what the application's own
#: authentication says, in the same form
User = tuple[str | None, str]


@attrs.frozen(kw_only=True)
class PendingURLElicitation:
    elicitation_id: str
    user: User
    #: the client (OAuth client id) that asked for it, when known
    client_id: str | None
    #: the session the completion notification goes to (None: a 2026-07-28 request, which has none)
    session: Any = attrs.field(eq=False, repr=False)
    expires_at: float


class URLElicitations:
    """Out-of-band (URL mode) elicitations in progress, each bound to a user.

    ``url``: the page that carries the interaction; ``elicitation_id`` is added
    to its query. ``ttl``: seconds an elicitation waits for completion;
    ``max_pending``: how many may wait at once (the oldest is dropped).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float = 600.0,
        max_pending: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname or parts.fragment:
            raise ValueError(f"{url!r} is not an absolute http(s) URL without fragment")
        if ttl <= 0 or max_pending < 1:
            raise ValueError("ttl > 0 and max_pending >= 1")
        self.url = url
        self.ttl = ttl
        self.max_pending = max_pending
        self.clock = clock
        self._pending: OrderedDict[str, PendingURLElicitation] = OrderedDict()
        #: (2026-07-28) completed, waiting for their request's retry to ask completed()
        self._done: dict[str, PendingURLElicitation] = {}

    def start(self, ctx: Any, message: str, *, user: User | None = None) -> ElicitRequestURLParams:
        """A URL elicitation for the user of ``ctx``'s request, to send with ``ctx.session.elicit``.

        The user is the verified token's (issuer, subject) -- [client/elicitation#27] derived
        from MCP authorization -- or ``user``, from the application's own authentication.
        Nothing the client sends is taken as the user ([#53]); with neither a token
        nor ``user`` there is no one to bind the state to but the session, which is
        not enough ([#25]): ValueError.
        """
        auth = getattr(ctx, "auth", None)
        if auth is not None and auth.subject is not None:
            # [client/elicitation#24, #27] the user as MCP authorization established them
            user = (auth.issuer, auth.subject)
        if user is None:
            raise ValueError(
                "no verified user for this request: serve with auth= (ctx.auth), or pass user= "
                "from your own authentication; a URL elicitation is never bound to a session alone"
            )
        now = self.clock()
        self._expire(now)
        eid = secrets.token_urlsafe(24)  # unguessable: the URL is not a credential, but it must not be guessed
        # [client/elicitation#35] bound to the user and the client (the session that asked; a
        # 2026-07-28 request has none, and learns of completion on its retry: completed())
        modern = era_of(getattr(ctx, "revision", "")) is Era.MODERN
        self._pending[eid] = PendingURLElicitation(
            elicitation_id=eid,
            user=user,
            client_id=auth.client_id if auth is not None else None,
            session=None if modern else ctx.session,
            expires_at=now + self.ttl,
        )
        while len(self._pending) > self.max_pending:
            self._pending.popitem(last=False)
        sep = "&" if urlsplit(self.url).query else "?"
        return ElicitRequestURLParams(
            message=message, url=f"{self.url}{sep}{urlencode({'elicitation_id': eid})}", elicitation_id=eid
        )

    def claim(self, elicitation_id: str, user: User) -> PendingURLElicitation:
        """What the page behind the URL calls once it knows who opened it.

        [client/elicitation#58, #59] the person who opened the URL must be the
        one who started the elicitation: PermissionError otherwise (it stays
        pending for the right user). [#60] LookupError for an id that is not
        pending (made up, edited in the URL, completed or expired).
        """
        self._expire(self.clock())
        pending = self._pending.get(elicitation_id)
        if pending is None:
            raise LookupError("no such URL elicitation is pending")
        if pending.user != user:
            # [client/elicitation#26] the pending state is its user's alone -- elicitation#statefulness
            raise PermissionError("this URL elicitation was started by another user")
        return pending

    async def complete(self, elicitation_id: str, user: User) -> PendingURLElicitation:
        """The interaction is done: check the user (:meth:`claim`), forget it, and send
        ``notifications/elicitation/complete`` to the session that started it."""
        pending = self.claim(elicitation_id, user)
        del self._pending[elicitation_id]
        if pending.session is None:
            # 2026-07-28: no notification exists; the request's retry asks completed()
            self._done[elicitation_id] = pending
            while len(self._done) > self.max_pending:
                self._done.pop(next(iter(self._done)))
            return pending
        await pending.session.notify(
            "notifications/elicitation/complete", ElicitationCompleteNotificationParams(elicitation_id=elicitation_id)
        )
        return pending

    def completed(self, ctx: Any, elicitation_id: str, *, user: User | None = None) -> bool:
        """(2026-07-28) Whether the interaction ``elicitation_id`` is done, asked by the retry of the
        request that started it (keep the id in ``ctx.state``). True once, then it is forgotten.

        The asker must be the user who started it, as :meth:`start` knows users (the verified
        token, or ``user``): PermissionError otherwise, whatever the id.
        """
        auth = getattr(ctx, "auth", None)
        if auth is not None and auth.subject is not None:
            user = (auth.issuer, auth.subject)
        self._expire(self.clock())
        pending = self._done.get(elicitation_id) or self._pending.get(elicitation_id)
        if pending is None:
            return False
        if pending.user != user:
            # [2026-07-28:client/elicitation#25, #48] only the user who started it learns how it went
            raise PermissionError("this URL elicitation was started by another user")
        return self._done.pop(elicitation_id, None) is not None

    def _expire(self, now: float) -> None:
        for eid in [e for e, p in self._pending.items() if p.expires_at <= now]:
            del self._pending[eid]
        for eid in [e for e, p in self._done.items() if p.expires_at <= now]:
            del self._done[eid]

    def __len__(self) -> int:
        return len(self._pending)
