"""``WWW-Authenticate``: reading challenges (client) and writing Bearer ones (resource server).

The grammar is RFC 9110 section 11.6.1 (a comma-separated list of
challenges, each a scheme followed by a token68 or by ``name=value``
parameters whose values are tokens or quoted strings). The Bearer scheme's
parameters are RFC 6750 section 3 (``realm``, ``scope``, ``error``,
``error_description``, ``error_uri``) plus RFC 9728 section 5.1's
``resource_metadata`` (authorization#14, #16, #21, #65).

A header the parser cannot read is not an error the client can do anything
about: :func:`parse_challenges` reads what it can and stops at the first
thing it cannot, so a 401 with a garbled header still leads to discovery
at the well-known URLs (#15).
"""

import re
from collections.abc import Iterable, Mapping

import attrs

__all__ = ["Challenge", "BearerChallenge", "parse_challenges", "bearer_challenge", "format_bearer_challenge"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SPACE = re.compile(r"[ \t]*")


@attrs.frozen
class Challenge:
    """One challenge: ``scheme`` lower-cased, parameter names lower-cased (they are case-insensitive)."""

    scheme: str
    params: dict[str, str] = attrs.field(factory=dict)
    token68: str | None = None


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def space(self) -> None:
        m = _SPACE.match(self.text, self.pos)
        assert m is not None
        self.pos = m.end()

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self, pattern: re.Pattern[str]) -> str | None:
        m = pattern.match(self.text, self.pos)
        if m is None or not m.group():
            return None
        self.pos = m.end()
        return m.group()

    def quoted(self) -> str | None:
        """A quoted-string (the opening quote is at ``pos``); None when it never closes."""
        out = []
        i = self.pos + 1
        while i < len(self.text):
            c = self.text[i]
            if c == "\\" and i + 1 < len(self.text):
                out.append(self.text[i + 1])
                i += 2
            elif c == '"':
                self.pos = i + 1
                return "".join(out)
            else:
                out.append(c)
                i += 1
        return None


def parse_challenges(header: str) -> list[Challenge]:
    """Every challenge in a ``WWW-Authenticate`` value (several headers joined with ``,`` are one value)."""
    s = _Scanner(header)
    challenges: list[Challenge] = []
    while True:
        s.space()
        while s.peek() == ",":  # empty list elements are allowed
            s.pos += 1
            s.space()
        if s.at_end():
            return challenges
        scheme = s.take(_TOKEN)
        if scheme is None:
            return challenges
        challenge = Challenge(scheme.lower())
        challenges.append(challenge)
        s.space()
        # a token68, or the first of the parameters (a token followed by '=' that is not
        # the padding of a token68)
        start = s.pos
        name = s.take(_TOKEN)
        s.space()
        if name is not None and s.peek() == "=" and not _is_token68(s, start):
            s.pos = start
        else:
            s.pos = start
            token68 = s.take(_TOKEN68)
            if token68 is not None:
                s.space()
                if s.at_end() or s.peek() == ",":
                    challenges[-1] = Challenge(challenge.scheme, {}, token68)
                    continue
                s.pos = start
        # parameters until the next challenge's scheme (a token not followed by '=')
        while True:
            s.space()
            if s.at_end():
                return challenges
            mark = s.pos
            name = s.take(_TOKEN)
            if name is None:
                if s.peek() == ",":
                    s.pos += 1
                    continue
                return challenges
            s.space()
            if s.peek() != "=":
                s.pos = mark  # the next challenge begins here
                break
            s.pos += 1
            s.space()
            if s.peek() == '"':
                value = s.quoted()
                if value is None:
                    return challenges
            else:
                value = s.take(_TOKEN) or ""
            challenge.params.setdefault(name.lower(), value)
            s.space()
            if s.peek() == ",":
                s.pos += 1


def _is_token68(s: _Scanner, start: int) -> bool:
    """Whether what starts at ``start`` is a token68 ending in '=' padding (``abc==``), not ``name=value``."""
    m = _TOKEN68.match(s.text, start)
    if m is None or not m.group().endswith("="):
        return False
    rest = _SPACE.match(s.text, m.end())
    assert rest is not None
    end = rest.end()
    return end >= len(s.text) or s.text[end] == ","


@attrs.frozen(kw_only=True)
class BearerChallenge:
    """The parameters of a Bearer challenge (RFC 6750 section 3, RFC 9728 section 5.1)."""

    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None
    error_uri: str | None = None
    realm: str | None = None

    def scopes(self) -> tuple[str, ...]:
        return tuple(self.scope.split()) if self.scope else ()


def bearer_challenge(values: str | Iterable[str] | None) -> BearerChallenge | None:
    """The Bearer challenge among ``WWW-Authenticate`` values, or None when there is none."""
    if values is None:
        return None
    header = values if isinstance(values, str) else ", ".join(values)
    for challenge in parse_challenges(header):
        if challenge.scheme == "bearer":
            p = challenge.params
            return BearerChallenge(
                resource_metadata=p.get("resource_metadata"),
                scope=p.get("scope"),
                error=p.get("error"),
                error_description=p.get("error_description"),
                error_uri=p.get("error_uri"),
                realm=p.get("realm"),
            )
    return None


def _quote(value: str) -> str:
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        raise ValueError(f"a challenge parameter cannot hold control characters: {value!r}")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_bearer_challenge(params: Mapping[str, str | None] | None = None, **more: str | None) -> str:
    """A ``WWW-Authenticate`` value for the Bearer scheme; parameters set to None are left out.

    ``format_bearer_challenge(resource_metadata=url, scope="files:read")``
    gives ``Bearer resource_metadata="...", scope="files:read"``.
    """
    items = {**(params or {}), **more}
    parts = []
    for name, value in items.items():
        if value is None:
            continue
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"not a parameter name: {name!r}")
        parts.append(f"{name}={_quote(value)}")
    return "Bearer " + ", ".join(parts) if parts else "Bearer"
