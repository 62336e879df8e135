"""basic/patterns/mrtr (2026-07-28): multi round-trip requests, sans-IO.

A modern server never sends a request of its own: when a handler needs the
client (elicitation, sampling, roots) the request is answered with an
``InputRequiredResult`` listing *input requests*, and the client retries the
same request with ``inputResponses`` (and the ``requestState`` it was given).

mcp_ref re-runs the handler on the retry (spec_notes/basic/patterns/mrtr.md):
nothing is kept in the process between rounds. What must survive a round
travels in ``requestState``, sealed by :class:`StateSealer`:

* the method and a digest of the request's salient params (a state is only
  good for the request it was issued for),
* the authenticated principal (never another user's state),
* an expiry (a short replay window),
* the answers gathered in earlier rounds (a retry carries only the newest
  round's answers),
* the handler's own small state (``ctx.state``).

Sealing is encrypt-then-MAC with the standard library only: a keystream of
HMAC-SHA256 in counter mode over a random nonce, then an HMAC-SHA256 tag over
everything; both keys are derived from the configured secret. Any process
holding the same secret opens the state; older secrets keep opening states
sealed before a rotation. The clock is the caller's (``now``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...errors import ErrorCode, MCPRefError, ProtocolError

__all__ = [
    "SUPPORTED_REQUESTS",
    "INPUT_METHODS",
    "InputRequired",
    "StateSealer",
    "StateRejected",
    "salient_digest",
    "default_key",
    "read_retry_fields",
    "STATE_KEY_ENV",
]

#: [2026-07-28:basic/patterns/mrtr#4] the requests an InputRequiredResult may answer -- mrtr#supported-requests
#: ([2026-07-28:server/tools#9, server/resources#7, server/prompts#6]: a tool, a resource's reader and a
#: prompt may each ask the client for input)
SUPPORTED_REQUESTS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
#: [2026-07-28:basic/patterns/mrtr#9] what an input request may be, and the client capability each needs
INPUT_METHODS: Final[Mapping[str, tuple[str, ...]]] = {
    "elicitation/create": ("elicitation",),
    "sampling/createMessage": ("sampling",),
    "roots/list": ("roots",),
}
#: the environment variable a server reads its requestState secret(s) from (comma separated,
#: the first seals, all open)
STATE_KEY_ENV: Final = "MCP_REF_STATE_KEY"

_VERSION: Final = b"\x01"
_NONCE: Final = 16
_TAG: Final = 32
_KEY_ID: Final = 4


class InputRequired(MCPRefError):
    """Raised inside a handler serving a 2026-07-28 request when it needs an answer the
    client has not given yet (``ctx.elicit()``, ``ctx.sample()``, ``ctx.list_roots()``).

    The runtime answers the request with an ``InputRequiredResult`` listing every
    input request the handler made (``requests``, by key). A handler should let it
    pass; one that catches it still gets the InputRequiredResult (the runtime
    records the requests on the context, not only in this exception).
    """

    def __init__(self, requests: Mapping[str, Any]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = dict(requests)


class StateRejected(ProtocolError):
    """A ``requestState`` that does not open: forged, tampered, expired, sealed with an unknown
    key, or issued for another request or user. Answered with -32602."""

    def __init__(self, why: str) -> None:
        # [2026-07-28:basic/patterns/mrtr#12] state failing verification is rejected -- mrtr#error-handling
        super().__init__(
            f"Invalid params: requestState rejected ({why})",
            ErrorCode.INVALID_PARAMS,
            requirement="2026-07-28:basic/patterns/mrtr#12",
        )
        self.why = why


def _derive(secret: bytes, label: bytes) -> bytes:
    return hmac.new(secret, b"mcp_ref requestState v1 " + label, hashlib.sha256).digest()


class _Key:
    __slots__ = ("enc", "ident", "mac")

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError(f"a requestState secret has at least 16 bytes (this one has {len(secret)})")
        self.enc = _derive(secret, b"encryption")
        self.mac = _derive(secret, b"authentication")
        self.ident = _derive(secret, b"key id")[:_KEY_ID]


class StateSealer:
    """Seals and opens ``requestState`` with a server's secret(s).

    ``secrets``: the first seals, every one opens (rotation: put the new secret
    first and keep the old one until the states it sealed have expired). With no
    secret a random one is made: states then open in this process only, which a
    single server is fine with and replicas are not (give them the same
    ``state_key``, or ``MCP_REF_STATE_KEY`` in their environment).
    ``ttl``: seconds a state stays valid.
    """

    def __init__(self, secrets: Sequence[bytes | str] = (), *, ttl: float = 600.0) -> None:
        if not ttl > 0:
            raise ValueError("the requestState ttl must be positive")
        raw = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in secrets]
        #: whether the key was made here (no secret given): states open in this process only
        self.random = not raw
        if not raw:
            raw = [os.urandom(32)]
        self._keys = [_Key(s) for s in raw]
        self.ttl = ttl

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], *, ttl: float = 600.0) -> StateSealer:
        """The secrets of ``MCP_REF_STATE_KEY`` (comma separated), or a random one."""
        value = environ.get(STATE_KEY_ENV, "")
        try:
            return cls([s for s in (part.strip() for part in value.split(",")) if s], ttl=ttl)
        except ValueError as e:
            raise ValueError(f"{STATE_KEY_ENV}: {e}") from None

    def seal(self, payload: Mapping[str, Any], *, now: float, nonce: bytes | None = None) -> str:
        """The sealed form of ``payload`` (a JSON object), valid until ``now + ttl``."""
        key = self._keys[0]
        body = dict(payload)
        body["exp"] = int(now + self.ttl)
        plain = json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")
        nonce = os.urandom(_NONCE) if nonce is None else nonce
        header = _VERSION + key.ident + nonce
        cipher = _xor(plain, _keystream(key.enc, nonce, len(plain)))
        tag = hmac.new(key.mac, header + cipher, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(header + cipher + tag).rstrip(b"=").decode("ascii")

    def open(self, token: Any, *, now: float) -> dict[str, Any]:
        """The payload of a sealed state; :class:`StateRejected` when it does not verify or has expired."""
        # [2026-07-28:basic/patterns/mrtr#11] the state is attacker-controlled input: nothing in it is read
        # before its tag verifies
        if type(token) is not str or not token.isascii() or len(token) > 1_000_000:
            raise StateRejected("not a state this server issued")
        try:
            blob = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except ValueError:
            raise StateRejected("not a state this server issued") from None
        if len(blob) < 1 + _KEY_ID + _NONCE + _TAG or blob[:1] != _VERSION:
            raise StateRejected("not a state this server issued")
        header, cipher, tag = blob[: 1 + _KEY_ID + _NONCE], blob[1 + _KEY_ID + _NONCE : -_TAG], blob[-_TAG:]
        ident, nonce = header[1 : 1 + _KEY_ID], header[1 + _KEY_ID :]
        for key in self._keys:
            if hmac.compare_digest(key.ident, ident):
                expected = hmac.new(key.mac, header + cipher, hashlib.sha256).digest()
                if hmac.compare_digest(expected, tag):
                    break
        else:
            # [2026-07-28:basic/patterns/mrtr#12] integrity protected: a forged or altered state is refused
            raise StateRejected("integrity check failed")
        try:
            payload = json.loads(_xor(cipher, _keystream(key.enc, nonce, len(cipher))).decode("utf-8"))
        except ValueError:
            raise StateRejected("integrity check failed") from None
        if type(payload) is not dict or type(payload.get("exp")) is not int:
            raise StateRejected("integrity check failed")
        if now >= payload["exp"]:
            # [2026-07-28:basic/patterns/mrtr#14] a short expiry bounds replay
            raise StateRejected("expired")
        return payload


def _keystream(key: bytes, nonce: bytes, size: int) -> bytes:
    blocks = []
    for counter in range((size + 31) // 32):
        blocks.append(hmac.new(key, nonce + counter.to_bytes(8, "big"), hashlib.sha256).digest())
    return b"".join(blocks)[:size]


def _xor(data: bytes, stream: bytes) -> bytes:
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


#: the params that say *which* request a state belongs to, per method
_SALIENT: Final[Mapping[str, tuple[str, ...]]] = {
    "tools/call": ("name", "arguments"),
    "prompts/get": ("name", "arguments"),
    "resources/read": ("uri",),
}


def salient_digest(method: str, params: Mapping[str, Any] | None) -> str:
    """[2026-07-28:basic/patterns/mrtr#14] a digest of the method and the params that identify
    the request (not ``_meta``, ``inputResponses`` or ``requestState``, which change between rounds)."""
    fields = _SALIENT.get(method, ())
    picked = {name: (params or {}).get(name) for name in fields}
    text = json.dumps([method, picked], separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def default_key(method: str, n: int) -> str:
    """The key of the ``n``-th input request of ``method`` a handler makes without naming it
    (``elicitation-1``, ``sampling-2``, ``roots-1``): the same on every run of a handler
    that asks in the same order. [2026-07-28:basic/patterns/mrtr#8] keys are unique in a request."""
    return f"{method.split('/')[0]}-{n}"


def read_retry_fields(params: Any) -> tuple[dict[str, Any], str | None]:
    """The raw ``inputResponses`` and ``requestState`` of a request's params, checked for shape.

    [2026-07-28:basic/patterns/mrtr#28, #29] a malformed InputResponses (not an object, an entry
    that is not one) is a protocol error: -32602 (:class:`~mcp_ref.errors.ProtocolError`).
    """
    if type(params) is not dict:
        return {}, None
    responses = params.get("inputResponses", _ABSENT)
    state = params.get("requestState", _ABSENT)
    if responses is _ABSENT:
        responses = {}
    elif type(responses) is not dict:
        raise ProtocolError("Invalid params: inputResponses is an object", ErrorCode.INVALID_PARAMS)
    else:
        for key, value in responses.items():
            if type(value) is not dict:
                raise ProtocolError(
                    f"Invalid params: inputResponses[{key!r}] is a result object", ErrorCode.INVALID_PARAMS
                )
    if state is _ABSENT:
        state = None
    elif type(state) is not str:
        raise ProtocolError("Invalid params: requestState is a string", ErrorCode.INVALID_PARAMS)
    return responses, state


_ABSENT: Final = object()
