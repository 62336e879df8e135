"""The requirements the cross-checker judges: :mod:`mcp_ref.basic.requirements`, and the
2026-07-28 statements only the cross-checker judges (:data:`CHECK_RULES`).

The base table lives with the base protocol, so the engine's events carry the
same ids and levels as the cross-checker's findings; the 2026-07-28 battery
(:mod:`.modern`) and the client fixture of that revision cite more
statements than the engine does, and their levels are the catalogue's
(``../shared/spec/2026-07-28/requirements.tsv``; a test keeps them equal).
"""

from typing import Final

from ..basic.requirements import (
    MUST_LEVELS,
    RULES,
    SHOULD_LEVELS,
    Rule,
    chapter_of,
    is_must,
    is_should,
)
from ..basic.requirements import rule as _base_rule

__all__ = [
    "Rule",
    "RULES",
    "CHECK_RULES",
    "rule",
    "level_of",
    "chapter_of",
    "is_must",
    "is_should",
    "MUST_LEVELS",
    "SHOULD_LEVELS",
]

#: the 2026-07-28 statements the cross-checker cites besides the engine's own (MODERN_RULES, looked up
#: there, never restated here: a test keeps the two apart)
CHECK_RULES: Final[dict[str, Rule]] = {
    row[0]: Rule(*row)
    for row in (
        (
            "2026-07-28:basic/index#1",
            "MUST",
            "the base protocol is supported: its messages are the ones the revision's schema defines",
        ),
        ("2026-07-28:basic/index#7", "MUST", "each request gets one response, with its id"),
        ("2026-07-28:basic/index#10", "MUST", "every result carries a resultType"),
        (
            "2026-07-28:basic/index#12",
            "MUST",
            "a resultType is one the core protocol (or a declared extension) defines",
        ),
        (
            "2026-07-28:basic/index#21",
            "MUST NOT",
            "no code of the sub-range reserved for the specification that it does not define",
        ),
        (
            "2026-07-28:basic/index#19",
            "MUST NOT",
            "no code of the legacy sub-range (-32000 to -32019) is given a meaning of its own",
        ),
        ("2026-07-28:basic/index#22", "MUST NOT", "none of the codes this revision retired (-32002, -32042)"),
        ("2026-07-28:basic/index#26", "MUST NOT", "a notification carries no id"),
        (
            "2026-07-28:basic/index#3",
            "MUST",
            "every message is JSON-RPC 2.0: a method the server does not have is -32601",
        ),
        ("2026-07-28:basic/index#52", "MUST", "every client request carries the required _meta fields"),
        ("2026-07-28:basic/index#54", "MUST", "over HTTP, a malformed _meta is refused with 400"),
        ("2026-07-28:basic/index#55", "SHOULD", "client requests carry clientInfo"),
        ("2026-07-28:basic/index#58", "MUST", "over HTTP, -32021 comes with 400"),
        ("2026-07-28:basic/index#59", "SHOULD", "results carry serverInfo in _meta"),
        ("2026-07-28:basic/index#61", "MUST", "notifications of a subscription carry its subscriptionId"),
        ("2026-07-28:basic/index#62", "MUST", "_meta traceparent, tracestate and baggage follow the W3C formats"),
        ("2026-07-28:basic/patterns/cancellation#3", "MUST NOT", "a server cancels nothing but a subscription"),
        ("2026-07-28:basic/patterns/cancellation#13", "SHOULD", "a cancelled request is not answered"),
        (
            "2026-07-28:basic/patterns/cancellation#11",
            "MUST",
            "a cancellation names a request the client issued that is still in progress",
        ),
        (
            "2026-07-28:basic/patterns/mrtr#14",
            "SHOULD",
            "a requestState is bound to the request that got it and refused on another",
        ),
        ("2026-07-28:basic/patterns/mrtr#21", "MUST", "a retry carries the answers to the input requests"),
        ("2026-07-28:basic/patterns/mrtr#23", "MUST", "a retry echoes the requestState exactly"),
        ("2026-07-28:basic/patterns/mrtr#25", "MUST NOT", "no requestState in a retry when none was given"),
        ("2026-07-28:basic/patterns/mrtr#26", "MUST", "a retry has a new JSON-RPC id"),
        (
            "2026-07-28:basic/patterns/subscriptions#1",
            "MUST NOT",
            "a subscription gets only the notification types it asked for",
        ),
        ("2026-07-28:basic/transports/stdio#1", "MUST NOT", "one message per line, no newline inside"),
        ("2026-07-28:basic/transports/stdio#4", "MUST NOT", "nothing but MCP messages on the server's stdout"),
        ("2026-07-28:basic/transports/stdio#5", "MUST NOT", "nothing but MCP messages on the server's stdin"),
        ("2026-07-28:basic/transports/streamable-http#13", "MUST", "an accepted notification gets 202 and no body"),
        ("2026-07-28:basic/transports/streamable-http#16", "MUST", "a request is answered with JSON or an SSE stream"),
        ("2026-07-28:basic/transports/streamable-http#20", "MUST NOT", "no server request on a response stream"),
        ("2026-07-28:basic/transports/streamable-http#21", "SHOULD", "the response ends its SSE stream"),
        ("2026-07-28:basic/transports/streamable-http#22", "SHOULD", "SSE answers carry X-Accel-Buffering: no"),
        ("2026-07-28:basic/transports/streamable-http#23", "MUST", "closing a request's stream cancels it"),
        ("2026-07-28:basic/transports/streamable-http#24", "MUST NOT", "nothing more is sent for a cancelled request"),
        ("2026-07-28:basic/transports/streamable-http#25", "MUST", "every POST carries MCP-Protocol-Version"),
        ("2026-07-28:basic/transports/streamable-http#26", "MUST", "the MCP-Protocol-Version header matches _meta"),
        ("2026-07-28:basic/transports/streamable-http#28", "MUST", "an unsupported version gets 400"),
        ("2026-07-28:basic/transports/streamable-http#3", "MUST", "a request from a foreign Origin gets 403"),
        ("2026-07-28:basic/transports/streamable-http#31", "MUST", "a request without MCP-Protocol-Version is refused"),
        (
            "2026-07-28:basic/transports/streamable-http#32",
            "REQUIRED",
            "the request metadata headers (Mcp-Method, Mcp-Name) are sent",
        ),
        (
            "2026-07-28:basic/transports/streamable-http#36",
            "MUST",
            "parameters marked x-mcp-header are mirrored into Mcp-Param-* headers",
        ),
        (
            "2026-07-28:basic/transports/streamable-http#54",
            "MUST",
            "a Base64 Mcp-Name is decoded before the comparison",
        ),
        ("2026-07-28:basic/transports/streamable-http#60", "MUST", "Mcp-Param-* headers are checked against the body"),
        ("2026-07-28:basic/transports/streamable-http#61", "MUST", "a failed header check is 400 and -32020"),
        ("2026-07-28:basic/transports/streamable-http#63", "MUST", "headers that differ from the body are refused"),
        ("2026-07-28:basic/transports/streamable-http#65", "MUST", "a header mismatch is error -32020 with 400"),
        ("2026-07-28:basic/transports/streamable-http#72", "SHOULD", "no session ids, no GET or DELETE (405)"),
        (
            "2026-07-28:basic/versioning#10",
            "SHOULD",
            "a modern-only server names its versions when refusing initialize",
        ),
        ("2026-07-28:basic/versioning#3", "MUST", "servers implement server/discover"),
        ("2026-07-28:schema#18", "MUST", "a HeaderMismatch error comes with HTTP 400"),
        ("2026-07-28:client/elicitation#14", "MUST", "a URL elicitation's url is a valid URL"),
        ("2026-07-28:server/discover#1", "MUST", "servers implement server/discover"),
        ("2026-07-28:server/resources#13", "MUST", "an unknown resource gets -32602"),
        ("2026-07-28:server/resources#12", "MUST", "resource URIs follow RFC 3986"),
        ("2026-07-28:server/resources#16", "MUST NOT", "no empty contents for an unknown resource"),
        ("2026-07-28:server/resources#4", "MUST NOT", "the resource list does not vary with other requests"),
        ("2026-07-28:server/tools#6", "MUST NOT", "the tool list does not vary with other requests"),
        ("2026-07-28:server/tools#8", "SHOULD", "tools come in the same order while the set is unchanged"),
        ("2026-07-28:server/utilities/caching#1", "MUST", "cacheable results carry ttlMs and cacheScope"),
        ("2026-07-28:server/utilities/caching#11", "MUST", "ttlMs is an integer >= 0"),
        ("2026-07-28:server/utilities/caching#24", "MUST", "every page of a list has the same cacheScope"),
        ("2026-07-28:server/utilities/logging#3", "MUST NOT", "no log message for a request without a logLevel"),
        ("basic/index#1", "MUST", "the base protocol is supported: its messages are the ones the schema defines"),
        ("server/resources#6", "MUST", "resource URIs follow RFC 3986"),
        ("client/elicitation#13", "MUST", "a URL elicitation's url is a valid URL"),
        ("basic/transports#16", "MUST", "a client's POST accepts both application/json and text/event-stream"),
        ("basic/transports#59", "MUST", "a client sends the session id it was given on every later request"),
        ("basic/transports#65", "MUST", "a client sends MCP-Protocol-Version on every request after initialize"),
        ("basic/transports#28", "SHOULD", "the SSE stream answering a request carries its response"),
        ("basic/transports#42", "MUST NOT", "no JSON-RPC response on the GET stream, unless it resumes a request's"),
        ("basic/transports#54", "MUST NOT", "a resumed stream replays no message of another stream"),
        ("basic/transports#67", "SHOULD", "without MCP-Protocol-Version a request is still served"),
    )
}


def rule(requirement: str) -> Rule:
    """The rule for ``requirement``; KeyError names an id mcp_ref does not cite."""
    found = CHECK_RULES.get(requirement)
    return found if found is not None else _base_rule(requirement)


def level_of(requirement: str | None) -> str | None:
    """The level a broken ``requirement`` is reported with (None for None)."""
    return None if requirement is None else rule(requirement).effective_level
