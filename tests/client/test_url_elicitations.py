"""URL-mode elicitation on the server, bound to the verified user (client/elicitation, security)."""

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from mcp_ref.basic.authorization.resource_server import AccessToken
from mcp_ref.client.url_elicitations import URLElicitations

ISSUER = "https://as.example"


class FakeSession:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def notify(self, method: str, params: Any = None) -> None:
        self.sent.append((method, params))


class Ctx:
    """What ``start`` reads of a request context: the verified token and the session."""

    def __init__(self, auth: AccessToken | None, arguments: dict[str, Any] | None = None) -> None:
        self.auth = auth
        self.session = FakeSession()
        self.params = arguments


def alice(client_id: str = "mcp-client") -> AccessToken:
    return AccessToken(subject="alice", client_id=client_id, issuer=ISSUER, audience=["https://mcp.example/mcp"])


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.req("client/elicitation#24", "client/elicitation#27", "client/elicitation#35", "client/elicitation#58")
async def test_the_user_who_started_it_completes_it_and_the_client_is_told() -> None:
    pending = URLElicitations("https://mcp.example/connect")
    ctx = Ctx(alice())
    params = pending.start(ctx, "Connect your account")
    assert params.mode == "url" and params.message == "Connect your account"
    query = dict(parse_qsl(urlsplit(params.url).query))
    assert query == {"elicitation_id": params.elicitation_id} and len(params.elicitation_id) >= 32
    # alice opens the page in her browser and logs in there (another client id, the same user)
    done = await pending.complete(params.elicitation_id, user=(ISSUER, "alice"))
    assert done.client_id == "mcp-client"  # bound to the client that asked, too
    assert [(m, p.elicitation_id) for m, p in ctx.session.sent] == [
        ("notifications/elicitation/complete", params.elicitation_id)
    ]
    assert len(pending) == 0


@pytest.mark.req("client/elicitation#59", "client/elicitation#26")
async def test_another_user_cannot_complete_it() -> None:
    pending = URLElicitations("https://mcp.example/connect")
    ctx = Ctx(alice())
    params = pending.start(ctx, "Connect your account")
    # the attacker sends alice the link, or opens alice's link in their own logged-in browser
    for intruder in ((ISSUER, "mallory"), ("https://other-as.example", "alice")):
        with pytest.raises(PermissionError):
            await pending.complete(params.elicitation_id, user=intruder)
    assert ctx.session.sent == [] and len(pending) == 1  # still there for alice
    await pending.complete(params.elicitation_id, user=(ISSUER, "alice"))


@pytest.mark.req("client/elicitation#60")
async def test_an_edited_or_stale_url_names_nothing() -> None:
    clock = Clock()
    pending = URLElicitations("https://mcp.example/connect?flow=github", ttl=60, clock=clock)
    params = pending.start(Ctx(alice()), "Connect")
    assert params.url.startswith("https://mcp.example/connect?flow=github&elicitation_id=")
    # one character edited (to one that surely differs: a random id may already end in "x")
    edited = params.elicitation_id[:-1] + ("y" if params.elicitation_id.endswith("x") else "x")
    assert edited != params.elicitation_id
    with pytest.raises(LookupError):
        pending.claim(edited, (ISSUER, "alice"))
    clock.now = 61
    with pytest.raises(LookupError):
        pending.claim(params.elicitation_id, (ISSUER, "alice"))


@pytest.mark.req("client/elicitation#53", "client/elicitation#25")
def test_the_user_is_the_verified_one_never_what_the_client_says() -> None:
    pending = URLElicitations("https://mcp.example/connect")
    # the client claims to be bob; the token says alice: alice it is
    params = pending.start(Ctx(alice(), {"user": "bob"}), "Connect", user=(ISSUER, "bob"))
    assert pending.claim(params.elicitation_id, (ISSUER, "alice")).user == (ISSUER, "alice")
    # no token and no user from the application's own authentication: a session alone is not enough
    with pytest.raises(ValueError, match="session alone"):
        pending.start(Ctx(None), "Connect")
    # a client acting for itself (no subject) has no user to bind to either
    with pytest.raises(ValueError):
        pending.start(Ctx(AccessToken(client_id="robot", issuer=ISSUER)), "Connect")
    # an application that authenticates users itself names the user
    assert pending.start(Ctx(None), "Connect", user=("local", "carol")).url


def test_pending_elicitations_are_bounded() -> None:
    pending = URLElicitations("https://mcp.example/connect", max_pending=2)
    first = pending.start(Ctx(alice()), "1")
    pending.start(Ctx(alice()), "2")
    pending.start(Ctx(alice()), "3")
    assert len(pending) == 2
    with pytest.raises(LookupError):
        pending.claim(first.elicitation_id, (ISSUER, "alice"))
    with pytest.raises(ValueError):
        URLElicitations("connect.html")
