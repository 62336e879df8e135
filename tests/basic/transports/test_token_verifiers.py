"""The built-in token verifiers against the example authorization server (real HTTP on loopback),
and a protected server in front of them: what each security rule refuses."""

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import jwt
import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcp_ref.basic.authorization.resource_server import InvalidToken, ProtectedResource
from mcp_ref.basic.authorization.verification import TokenCache, keys_from_jwks, token_from_introspection
from mcp_ref.basic.transports.http_server import serve_http
from mcp_ref.basic.transports.token_verifiers import IntrospectionVerifier, JWTVerifier
from mcp_ref.errors import HTTPTransportError
from mcp_ref.examples.auth_server import AuthorizationServer, serve_auth_server

from ...examples.test_auth_server import REDIRECT, pkce, query_of
from .oauth_world import Answer, Clock, FakeAuthServer, Recorded
from .test_http_server_auth import ACCEPT_BOTH, INIT, bearer, challenge_params, demo_server
from .test_streamable_http import raw

MCP = "http://127.0.0.1:8000/mcp"
OTHER = "http://127.0.0.1:8001/mcp"


async def issue(server: AuthorizationServer, resource: str = MCP, scope: str = "mcp") -> dict[str, Any]:
    """A token from the example server, by its own endpoints (as a client would get one)."""
    client = server.register([REDIRECT])
    verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource,
        "scope": scope,
    }
    status, location = await server.authorize_endpoint(query)
    assert status == 302, location
    form = {
        "grant_type": "authorization_code",
        "code": query_of(location)["code"],
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "client_id": client.client_id,
    }
    return await server.token_endpoint(form, None)


@asynccontextmanager
async def running_as(**options: Any) -> AsyncIterator[tuple[AuthorizationServer, str]]:
    server = AuthorizationServer(resources=[MCP, OTHER], scopes_supported=["mcp", "admin"], **options)
    server.add_resource_server("rs", "rs-secret")
    async with trio.open_nursery() as nursery:
        issuer = await nursery.start(serve_auth_server, server)
        yield server, issuer
        nursery.cancel_scope.cancel()


class Counting:
    """Counts the introspection requests the server answers."""

    def __init__(self, server: AuthorizationServer) -> None:
        self.calls = 0
        inner = server.introspect_endpoint

        def counted(*args: Any) -> dict[str, Any]:
            self.calls += 1
            return inner(*args)

        server.introspect_endpoint = counted  # type: ignore[method-assign]


async def test_introspection_turns_a_token_into_who_and_what() -> None:
    async with running_as() as (server, issuer):
        tokens = await issue(server, scope="mcp admin")
        verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret", issuer=issuer)
        access = await verifier.verify(tokens["access_token"])
        assert access.subject == "demo-user" and access.audience == (MCP,) and access.scopes == {"mcp", "admin"}
        assert access.issuer == issuer and access.expires_at is not None and access.expires_at > time.time()
        with pytest.raises(InvalidToken):
            await verifier.verify("not-a-token")
        with pytest.raises(InvalidToken):  # a refresh token is no access token
            await verifier.verify(tokens["refresh_token"])


@pytest.mark.req("basic/authorization#105", "client/elicitation#30")
async def test_what_handlers_get_of_a_token_does_not_hold_the_token() -> None:
    async with running_as() as (server, issuer):
        token = (await issue(server))["access_token"]
        verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret")
        access = await verifier.verify(token)
        # nothing a handler can reach carries the client's token, so nothing can pass it on
        reachable = [repr(access), json.dumps(dict(access.claims))] + [str(getattr(access, f)) for f in dir(access)]
        assert not any(token in text for text in reachable)
        assert all(token.encode() not in key for key in verifier.cache._entries)


async def test_introspection_answers_are_kept_briefly(mock_clock: trio.testing.MockClock) -> None:
    async with running_as() as (server, issuer):
        counting = Counting(server)
        token = (await issue(server))["access_token"]
        verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret", cache_ttl=60)
        for _ in range(3):
            await verifier.verify(token)
        assert counting.calls == 1
        mock_clock.jump(61)
        await verifier.verify(token)
        assert counting.calls == 2
        # an inactive answer is kept too (apart from the active ones), as long: a bad token sent
        # again costs no introspection, until the refusal is older than the ttl
        for _ in range(3):
            with pytest.raises(InvalidToken, match="not active"):
                await verifier.verify("unknown")
        assert counting.calls == 3
        mock_clock.jump(61)
        with pytest.raises(InvalidToken):
            await verifier.verify("unknown")
        assert counting.calls == 4


async def test_bad_tokens_cost_one_introspection_each_not_one_per_request() -> None:
    # the report: 200 requests with a bad token made 200 introspection calls
    async with running_as() as (server, issuer):
        counting = Counting(server)
        verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret")
        async with protected_mcp(verifier) as url:
            for _ in range(200):
                status, _, _ = await raw(url, "POST", {**ACCEPT_BOTH, **bearer("forged-token")}, INIT)
                assert status == 401
        assert counting.calls == 1 and verifier.introspections == 1


async def test_requests_with_one_token_at_once_share_one_introspection() -> None:
    async with running_as() as (server, issuer):
        counting = Counting(server)
        token = (await issue(server))["access_token"]
        verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret")
        results: list[Any] = []

        async def check(candidate: str) -> None:
            try:
                results.append((await verifier.verify(candidate)).subject)
            except InvalidToken:
                results.append(None)

        async with trio.open_nursery() as nursery:
            for n in range(40):
                nursery.start_soon(check, token if n % 2 else "forged")
        assert sorted(results, key=str) == [None] * 20 + ["demo-user"] * 20
        assert counting.calls == 2


def test_refused_tokens_do_not_push_verified_ones_out() -> None:
    cache = TokenCache(ttl=10, size=2, refused_ttl=5)
    access = token_from_introspection({"active": True, "aud": MCP, "exp": 100})
    cache.put("good", access, now=0)
    for n in range(10):
        cache.put_refusal(f"bad-{n}", "not active", now=0)
    assert cache.get("good", 1, 1) is access and cache.refusal("bad-9", 1) == "not active"
    assert cache.refusal("bad-0", 1) is None  # (bounded: the oldest went)
    assert cache.refusal("bad-9", 5) is None  # refused_ttl passed


async def test_introspection_with_wrong_credentials_or_nobody_listening_raises() -> None:
    async with running_as() as (server, issuer):
        token = (await issue(server))["access_token"]
        with pytest.raises(HTTPTransportError) as failed:
            await IntrospectionVerifier(issuer + "/introspect", "rs", "wrong").verify(token)
        assert failed.value.status == 401
    with pytest.raises(HTTPTransportError):  # the server is gone
        await IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret", timeout=2).verify(token)


def test_token_cache_is_bounded_and_keeps_no_token() -> None:
    cache = TokenCache(ttl=10, size=2)
    access = token_from_introspection({"active": True, "aud": MCP, "exp": 100})
    for token in ("a", "b", "c"):
        cache.put(token, access, now=0)
    assert len(cache) == 2 and cache.get("a", 0, 0) is None and cache.get("c", 0, 0) is access
    assert cache.get("c", 0, wall=100) is None  # expired meanwhile
    assert all(b"c" != key for key in cache._entries)


@pytest.mark.parametrize(
    "exp", [10**400, -(10**400), float("inf"), float("nan"), 2.0**60], ids=["1e400", "-1e400", "inf", "nan", "2**60"]
)
def test_an_expiry_no_clock_can_compare_is_an_invalid_token(exp: Any) -> None:
    with pytest.raises(InvalidToken, match="not a usable time"):
        token_from_introspection({"active": True, "aud": MCP, "exp": exp})
    assert token_from_introspection({"active": True, "exp": 2**40}).expires_at == 2.0**40
    assert token_from_introspection({"active": True, "exp": "soon"}).expires_at is None


@pytest.mark.parametrize("claim", ["nbf", "iat"])
@pytest.mark.parametrize(
    "value", [10**400, -(10**400), float("inf"), float("nan")], ids=["1e400", "-1e400", "inf", "nan"]
)
def test_other_time_claims_no_clock_can_compare_make_an_invalid_token(claim: str, value: Any) -> None:
    # (they reach the handlers with the token's claims: arithmetic on 10**400 there would fail)
    with pytest.raises(InvalidToken, match=f"\\({claim}\\) is not a usable time"):
        token_from_introspection({"active": True, "aud": MCP, claim: value})
    assert token_from_introspection({"active": True, claim: 1_800_000_000}).claims[claim] == 1_800_000_000


def test_introspection_answers_are_read_strictly() -> None:
    with pytest.raises(ValueError):
        token_from_introspection({"scope": "mcp"})  # no active member: not an introspection answer
    with pytest.raises(InvalidToken):
        token_from_introspection({"active": False})
    with pytest.raises(InvalidToken):
        token_from_introspection({"active": True, "iss": "https://evil.example"}, issuer="https://as.example")
    access = token_from_introspection({"active": True, "aud": [MCP, 3], "scope": "a b", "client_id": "c"})
    assert access.audience == (MCP,) and access.scopes == {"a", "b"} and access.client_id == "c"


# -- a protected server with the built-in verifiers -----------------------------------------------


@asynccontextmanager
async def protected_mcp(verifier: Any) -> AsyncIterator[str]:
    auth = ProtectedResource(
        verifier=verifier,
        authorization_servers=["http://127.0.0.1:9"],
        resource=MCP,
        required_scopes=["mcp"],
    )
    async with trio.open_nursery() as nursery:
        info = await nursery.start(partial(serve_http, demo_server(), auth=auth))
        yield info.url
        nursery.cancel_scope.cancel()


@pytest.mark.req("basic/authorization#58", "basic/authorization#63")
async def test_a_token_the_authorization_server_issued_for_another_resource_is_refused() -> None:
    async with running_as() as (server, issuer):
        verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret")
        ours, theirs = (await issue(server, MCP))["access_token"], (await issue(server, OTHER))["access_token"]
        async with protected_mcp(verifier) as url:
            status, _, _ = await raw(url, "POST", {**ACCEPT_BOTH, **bearer(ours)}, INIT)
            assert status == 200
            status, headers, _ = await raw(url, "POST", {**ACCEPT_BOTH, **bearer(theirs)}, INIT)
            assert status == 401
            assert challenge_params(headers["www-authenticate"])["error"] == "invalid_token"


@pytest.mark.req("basic/authorization#59", "basic/authorization#60")
async def test_an_unreachable_introspection_endpoint_means_401_not_500() -> None:
    async with running_as() as (_, issuer):
        pass  # started and stopped: nothing listens there any more
    verifier = IntrospectionVerifier(issuer + "/introspect", "rs", "rs-secret", timeout=2)
    async with protected_mcp(verifier) as url:
        status, headers, body = await raw(url, "POST", {**ACCEPT_BOTH, **bearer("some-token")}, INIT)
        assert status == 401
        assert challenge_params(headers["www-authenticate"])["error"] == "invalid_token"
        assert json.loads(body)["error_description"] == "the token could not be verified"


# -- JWT access tokens -------------------------------------------------------------------------------

ISSUER = "https://as.example"


def signed(key: Any, *, kid: str = "k1", alg: str = "ES256", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "sub": "alice", "aud": MCP, "scope": "mcp", "iat": now, "exp": now + 300, **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, alg, headers={"kid": kid})


def jwks_of(key: Any, kid: str = "k1") -> dict[str, Any]:
    from jwt.algorithms import ECAlgorithm

    return {"keys": [{**ECAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": kid, "use": "sig"}]}


async def test_a_jwt_access_token_is_checked_and_read() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    verifier = JWTVerifier(issuer=ISSUER, jwks=jwks_of(key))
    access = await verifier.verify(signed(key, scope="mcp admin", client_id="app"))
    assert (access.subject, access.client_id, access.audience, access.scopes) == (
        "alice",
        "app",
        (MCP,),
        {"mcp", "admin"},
    )
    now = int(time.time())
    other = ec.generate_private_key(ec.SECP256R1())
    for bad in (
        signed(key, exp=now - 10),  # expired
        signed(key, iss="https://evil.example"),  # another issuer
        signed(other),  # signed by a key that is not the issuer's
        signed(key, exp=None),  # no expiry at all
        signed(key)[:-4] + "AAAA",  # tampered
        "not.a.jwt",
    ):
        with pytest.raises(InvalidToken):
            await verifier.verify(bad)


async def test_symmetric_and_none_algorithms_are_refused() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    verifier = JWTVerifier(issuer=ISSUER, jwks=jwks_of(key))
    with pytest.raises(InvalidToken):
        await verifier.verify(signed("a-shared-secret-of-enough-length-32b", alg="HS256"))
    with pytest.raises(InvalidToken):
        await verifier.verify(jwt.encode({"iss": ISSUER, "aud": MCP, "exp": 2**40}, None, "none"))
    with pytest.raises(ValueError):
        JWTVerifier(issuer=ISSUER, jwks=jwks_of(key), algorithms=["HS256"])


async def test_required_typ_insists_on_at_jwt() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    verifier = JWTVerifier(issuer=ISSUER, jwks=jwks_of(key), required_typ="at+jwt")
    with pytest.raises(InvalidToken):
        await verifier.verify(signed(key))  # typ JWT (an ID token could look like this)
    token = jwt.encode({"iss": ISSUER, "aud": MCP, "exp": 2**40}, key, "ES256", headers={"kid": "k1", "typ": "at+jwt"})
    assert (await verifier.verify(token)).audience == (MCP,)


async def test_jwks_are_fetched_kept_and_fetched_again_for_a_new_key(mock_clock: trio.testing.MockClock) -> None:
    async with running_as(jwt_access_tokens=True) as (server, issuer):
        verifier = JWTVerifier(issuer=issuer, jwks_url=issuer + "/jwks", refetch_interval=30)
        first = (await issue(server))["access_token"]
        access = await verifier.verify(first)
        assert access.audience == (MCP,) and access.subject == "demo-user"
        await verifier.verify((await issue(server))["access_token"])
        assert verifier.fetches == 1
        # the server rotates its key: a token with the new key id makes the keys be fetched again
        server.signing_key, server.key_id = ec.generate_private_key(ec.SECP256R1()), "k2"
        mock_clock.jump(31)
        await verifier.verify((await issue(server))["access_token"])
        assert verifier.fetches == 2
        # made-up key ids cannot make it fetch again and again
        for kid in ("x", "y", "z"):
            with pytest.raises(InvalidToken):
                await verifier.verify(signed(server.signing_key, kid=kid, iss=issuer))
        assert verifier.fetches == 2


async def test_a_jwt_for_another_resource_is_refused_by_the_server() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    verifier = JWTVerifier(issuer=ISSUER, jwks=jwks_of(key))
    async with protected_mcp(verifier) as url:
        status, _, _ = await raw(url, "POST", {**ACCEPT_BOTH, **bearer(signed(key))}, INIT)
        assert status == 200
        status, _, _ = await raw(url, "POST", {**ACCEPT_BOTH, **bearer(signed(key, aud=OTHER))}, INIT)
        assert status == 401


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": 10**400},
        {"exp": float("inf")},
        {"exp": 2**63},
        {"iat": 10**400},
        {"iat": float("-inf")},
        {"nbf": -(10**400)},
    ],
    ids=["exp-1e400", "exp-inf", "exp-2**63", "iat-1e400", "iat--inf", "nbf--1e400"],
)
async def test_a_jwt_with_an_absurd_time_claim_is_a_401_and_no_traceback(
    claims: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    # the report: exp 10**400 was refused, but as a verifier that broke (a traceback in the log);
    # an absurd iat or nbf PyJWT lets through (iat is not checked; nbf in the distant past passes)
    key = ec.generate_private_key(ec.SECP256R1())
    verifier = JWTVerifier(issuer=ISSUER, jwks=jwks_of(key))
    with pytest.raises(InvalidToken):
        await verifier.verify(signed(key, **claims))
    async with protected_mcp(verifier) as url:
        status, headers, body = await raw(url, "POST", {**ACCEPT_BOTH, **bearer(signed(key, **claims))}, INIT)
    assert status == 401 and json.loads(body)["error"] == "invalid_token"
    assert challenge_params(headers["www-authenticate"])["error"] == "invalid_token"
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


def test_keys_of_other_kinds_and_uses_are_skipped() -> None:
    from jwt.algorithms import RSAAlgorithm

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwks = {
        "keys": [
            {**RSAAlgorithm.to_jwk(rsa_key.public_key(), as_dict=True), "kid": "r", "use": "sig"},
            {**RSAAlgorithm.to_jwk(rsa_key.public_key(), as_dict=True), "kid": "enc", "use": "enc"},
            {"kty": "unknown", "kid": "u"},
        ]
    }
    assert set(keys_from_jwks(jwks)) == {"r"}
    with pytest.raises(ValueError):
        keys_from_jwks({"no": "keys"})


# -- an authorization server that misbehaves -------------------------------------------------------


@asynccontextmanager
async def scripted_endpoint(answer: Any) -> AsyncIterator[tuple[str, list[Recorded]]]:
    """An HTTP server on loopback answering every request with ``answer`` (a handler: an Answer, or
    None to hang); the URL and the requests it got."""
    fake = FakeAuthServer(Clock())

    async def script(server: FakeAuthServer, request: Recorded) -> Answer:
        return await answer()

    fake.override = script
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, fake.serve_connection, 0, host="127.0.0.1"))
        yield f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}", fake.requests
        nursery.cancel_scope.cancel()


HTML = {"content-type": "text/html"}
BAD_ANSWERS = {
    "500 page": ((500, HTML, b"<html><h1>Internal Server Error</h1></html>"), "answered HTTP 500"),
    "html login page": ((200, HTML, b"<!doctype html><p>Please sign in</p>"), "not JSON"),
    "not an introspection answer": ((200, {}, b'{"scope": "mcp"}'), "boolean 'active'"),
    "huge": ((200, {}, b'{"active": true, "pad": "' + b"x" * 70_000 + b'"}'), "over 65536"),
}


@pytest.mark.req("basic/authorization#59")
@pytest.mark.parametrize("bad", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
async def test_a_misbehaving_introspection_endpoint_is_one_clear_error_never_kept(bad: tuple[Any, str]) -> None:
    answer, problem = bad

    async def reply() -> Answer:
        return answer

    async with scripted_endpoint(reply) as (url, requests):
        verifier = IntrospectionVerifier(url + "/introspect", "rs", "rs-secret")
        for _ in range(2):
            with pytest.raises((HTTPTransportError, ValueError), match=problem):
                await verifier.verify("some-token")
        assert len(requests) == 2  # a failure is not cached: the next request asks again
        async with protected_mcp(verifier) as mcp:
            status, headers, _ = await raw(mcp, "POST", {**ACCEPT_BOTH, **bearer("some-token")}, INIT)
            assert status == 401  # the MCP request is refused, the server lives on
            assert challenge_params(headers["www-authenticate"])["error"] == "invalid_token"


@pytest.mark.req("basic/authorization#59")
async def test_a_slow_introspection_endpoint_times_out(mock_clock: trio.testing.MockClock) -> None:
    asked = trio.Event()

    async def hang() -> Answer:
        asked.set()
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async with scripted_endpoint(hang) as (url, _):
        verifier = IntrospectionVerifier(url + "/introspect", "rs", "rs-secret", timeout=5)
        failure: list[BaseException] = []

        async def verify() -> None:
            with pytest.raises(HTTPTransportError, match="within 5 s") as raised:
                await verifier.verify("some-token")
            failure.append(raised.value)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(verify)
            await asked.wait()
            mock_clock.jump(4.9)
            await trio.testing.wait_all_tasks_blocked()
            assert not failure  # still waiting within its timeout
            mock_clock.jump(0.2)
        assert failure


@pytest.mark.req("basic/authorization#59")
@pytest.mark.parametrize("bad", [BAD_ANSWERS["500 page"], BAD_ANSWERS["html login page"]], ids=["500", "html"])
async def test_a_misbehaving_jwks_endpoint_is_one_clear_error(bad: tuple[Any, str]) -> None:
    answer, problem = bad
    key = ec.generate_private_key(ec.SECP256R1())

    async def reply() -> Answer:
        return answer

    async with scripted_endpoint(reply) as (url, requests):
        verifier = JWTVerifier(issuer=ISSUER, jwks_url=url + "/jwks")
        with pytest.raises(HTTPTransportError, match=problem):
            await verifier.verify(signed(key))
        assert verifier.fetches == 0 and len(requests) == 1
