"""The normative statements mcp_ref cites by id, with their levels.

Each entry names a statement of ``../shared/spec/2025-11-25/requirements.tsv``
by its stable id, the keyword the catalogue gives it, and what it asks, in
our own words. The engine attaches these ids (and levels) to the events and
exceptions that report a broken rule, so an application and ``mcp-ref
check`` see the same thing; the cross-checker judges with the same table.
The table travels with the package (the spec checkout may be absent); a test
keeps the levels equal to the catalogue's.

One deliberate exception, recorded in ``spec_notes/crosscheck.md``:
``server/utilities/logging#2`` is the client's permission (MAY) to set a
minimum level; the duty it creates for the server (send nothing below that
level) is judged as a SHOULD, as ``SetLevelRequest`` in schema.ts words it.
"""

from typing import Final

import attrs

from ..schema._base import install_model_methods

__all__ = [
    "Rule",
    "RULES",
    "MODERN_RULES",
    "rule",
    "level_of",
    "chapter_of",
    "is_must",
    "is_should",
    "MUST_LEVELS",
    "SHOULD_LEVELS",
]

#: the keywords that make a violated requirement a failure (exit status 1)
MUST_LEVELS: Final = frozenset({"MUST", "MUST NOT", "REQUIRED", "SHALL", "SHALL NOT"})
SHOULD_LEVELS: Final = frozenset({"SHOULD", "SHOULD NOT", "RECOMMENDED", "NOT RECOMMENDED"})


@attrs.frozen(repr=False, eq=False)
class Rule:
    id: str
    level: str
    what: str
    #: the level the cross-checker judges with, when it is not the catalogue's (see module doc)
    judged_as: str | None = None

    @property
    def effective_level(self) -> str:
        return self.judged_as or self.level

    @property
    def chapter(self) -> str:
        return chapter_of(self.id)


def chapter_of(requirement: str) -> str:
    return requirement.split("#", 1)[0]


def is_must(level: str) -> bool:
    return level in MUST_LEVELS


def is_should(level: str) -> bool:
    return level in SHOULD_LEVELS


def _table(*rows: tuple[str, str, str] | tuple[str, str, str, str]) -> dict[str, Rule]:
    return {row[0]: Rule(*row) for row in rows}


RULES: Final[dict[str, Rule]] = _table(
    # -- basic/index: JSON-RPC messages ------------------------------------------------------
    ("basic/index#3", "MUST", "every message is JSON-RPC 2.0, and errors use its codes"),
    ("basic/index#4", "MUST", "a request id is a string or an integer"),
    ("basic/index#5", "MUST NOT", "a request id is never null"),
    ("basic/index#6", "MUST NOT", "a requestor never reuses a request id in the session"),
    ("basic/index#7", "MUST", "a result answers a request with that request's id"),
    ("basic/index#8", "MUST", "a result response carries a result field"),
    ("basic/index#10", "MUST", "an error answers a request with its id (none only when unreadable)"),
    ("basic/index#11", "MUST", "an error has a code and a message"),
    ("basic/index#12", "MUST", "error codes are integers"),
    ("basic/index#13", "MUST NOT", "a notification is never answered"),
    ("basic/index#14", "MUST NOT", "a notification carries no id"),
    ("basic/index#24", "MUST", "schemas are valid in their dialect"),
    ("basic/index#26", "MUST", "_meta keys follow the prefix/name grammar"),
    # -- basic/lifecycle ---------------------------------------------------------------------
    ("basic/lifecycle#1", "MUST", "initialization comes first"),
    ("basic/lifecycle#2", "MUST", "the client starts with a well-formed initialize request"),
    ("basic/lifecycle#3", "MUST", "the server answers initialize with its capabilities and information"),
    ("basic/lifecycle#4", "MUST", "the client sends notifications/initialized before normal operation"),
    ("basic/lifecycle#5", "SHOULD NOT", "the client sends only pings before initialize is answered"),
    ("basic/lifecycle#6", "SHOULD NOT", "the server sends only pings and logging before initialized"),
    ("basic/lifecycle#7", "MUST", "the client's initialize offers a protocol version it supports"),
    ("basic/lifecycle#9", "MUST", "a server answers a version it supports with that version"),
    ("basic/lifecycle#10", "MUST", "otherwise the server answers with a version it supports"),
    ("basic/lifecycle#11", "SHOULD", "that version is the server's latest"),
    ("basic/lifecycle#12", "SHOULD", "a client disconnects from a version it does not support"),
    ("basic/lifecycle#14", "MUST", "only the negotiated revision and capabilities are used"),
    ("basic/lifecycle#18", "SHOULD", "a request that timed out is cancelled"),
    # -- basic/authorization -------------------------------------------------------------------
    ("basic/authorization#14", "MUST", "a protected server's resource metadata is discoverable"),
    ("basic/authorization#16", "SHOULD", "a protected server's 401 challenge names the scope"),
    ("basic/authorization#60", "MUST", "an invalid or expired token is answered with HTTP 401"),
    # -- basic/transports ----------------------------------------------------------------------
    ("basic/transports#1", "MUST", "messages are UTF-8"),
    ("basic/transports#3", "MUST NOT", "a stdio message holds no newline"),
    ("basic/transports#6", "MUST NOT", "a stdio server writes only MCP messages on stdout"),
    ("basic/transports#7", "MUST NOT", "a stdio client writes only MCP messages on the server's stdin"),
    ("basic/transports#10", "MUST", "an invalid Origin is answered with HTTP 403"),
    ("basic/transports#18", "MUST", "a notification or response POSTed is answered 202 with no body"),
    ("basic/transports#19", "MUST", "input the server cannot accept gets an HTTP error status"),
    ("basic/transports#21", "MUST", "a POSTed request is answered with JSON or an SSE stream"),
    ("basic/transports#23", "SHOULD", "an SSE stream begins with a priming event (an id, empty data)"),
    ("basic/transports#32", "SHOULD", "an SSE stream ends once it has carried its response"),
    ("basic/transports#39", "MUST", "a GET is answered with an SSE stream or 405"),
    ("basic/transports#50", "MUST", "an SSE event id is unique across the streams of a session"),
    ("basic/transports#56", "SHOULD", "a session id is unique and cannot be guessed"),
    ("basic/transports#57", "MUST", "a session id holds visible ASCII only"),
    ("basic/transports#60", "SHOULD", "a request without the session id is answered 400"),
    ("basic/transports#61", "MUST", "a terminated session's id is answered 404"),
    ("basic/transports#68", "MUST", "an unsupported MCP-Protocol-Version header is answered 400"),
    # -- basic/utilities -----------------------------------------------------------------------
    ("basic/utilities/ping#1", "MUST", "a ping is answered promptly with an empty result"),
    ("basic/utilities/cancellation#1", "MUST", "a cancellation names a request of the same direction in progress"),
    ("basic/utilities/cancellation#2", "MUST NOT", "initialize is never cancelled"),
    ("basic/utilities/cancellation#3", "MUST", "task-augmented requests are cancelled with tasks/cancel"),
    ("basic/utilities/cancellation#4", "SHOULD", "a cancelled request is stopped and not answered"),
    ("basic/utilities/progress#1", "MUST", "progress tokens are strings or integers"),
    ("basic/utilities/progress#2", "MUST", "progress tokens are unique among active requests"),
    ("basic/utilities/progress#4", "MUST", "progress increases with every notification"),
    ("basic/utilities/progress#7", "MUST", "progress names only tokens of active requests"),
    ("basic/utilities/progress#11", "MUST", "a task's progress stops once it is terminal"),
    ("basic/utilities/progress#14", "MUST", "progress stops once the request completed"),
    ("basic/utilities/tasks#1", "MUST", "task support is declared in the tasks capability"),
    ("basic/utilities/tasks#2", "SHOULD", "task augmentation only where the receiver declared it"),
    ("basic/utilities/tasks#4", "MUST NOT", "no task-augmented tools/call without tasks.requests.tools.call"),
    ("basic/utilities/tasks#6", "SHOULD", "a tool without task support called as a task gets -32601"),
    ("basic/utilities/tasks#9", "MUST", "a task-only tool called without a task gets -32601"),
    ("basic/utilities/tasks#23", "MUST", "task ids are strings"),
    ("basic/utilities/tasks#26", "MUST", "a task begins in the working status"),
    ("basic/utilities/tasks#28", "MUST NOT", "a terminal task never changes status"),
    ("basic/utilities/tasks#36", "MUST", "task responses carry an ISO 8601 createdAt"),
    ("basic/utilities/tasks#37", "MUST", "task responses carry an ISO 8601 lastUpdatedAt"),
    ("basic/utilities/tasks#39", "MUST", "tasks/get carries the actual ttl (or null)"),
    ("basic/utilities/tasks#43", "MUST", "an accepted task-augmented request is answered with CreateTaskResult"),
    ("basic/utilities/tasks#46", "MUST", "tasks/result waits until the task is terminal"),
    ("basic/utilities/tasks#47", "MUST", "tasks/result returns what the request would have returned"),
    ("basic/utilities/tasks#57", "MUST", "tasks/list gives a nextCursor while more tasks remain"),
    ("basic/utilities/tasks#60", "MUST", "cancelling a terminal task gets -32602"),
    ("basic/utilities/tasks#61", "MUST", "a cancelled task is in the cancelled status when tasks/cancel is answered"),
    ("basic/utilities/tasks#67", "MUST", "the tasks/result response carries the related-task _meta key"),
    ("basic/utilities/tasks#68", "MUST", "an unknown task id gets -32602"),
    # -- server ----------------------------------------------------------------------------------
    ("server/tools#3", "MUST", "a server with tools declares the tools capability"),
    ("server/tools#4", "SHOULD", "a server that declared tools.listChanged tells when the list changes"),
    ("server/tools#5", "MUST", "a tool's inputSchema is a valid JSON Schema object"),
    ("server/tools#7", "SHOULD", "tool names are 1 to 128 characters long"),
    ("server/tools#9", "SHOULD", "tool names use only ASCII letters, digits, '_', '-' and '.'"),
    ("server/tools#11", "SHOULD", "tool names are unique within a server"),
    ("server/tools#15", "SHOULD", "structured content also comes as JSON text"),
    ("server/tools#16", "MUST", "structured content conforms to the tool's output schema"),
    ("server/tools#20", "MUST", "a server validates tool inputs (an unknown tool is an error)"),
    ("server/resources#1", "MUST", "a server with resources declares the resources capability"),
    ("server/resources#7", "SHOULD", "an unknown resource gets -32002"),
    ("server/resources#10", "MUST", "binary resource data is base64"),
    ("server/prompts#1", "MUST", "a server with prompts declares the prompts capability"),
    ("server/prompts#3", "MUST", "image data is base64 with a MIME type"),
    ("server/prompts#4", "MUST", "audio data is base64 with a MIME type"),
    ("server/prompts#6", "SHOULD", "an unknown prompt or missing argument gets -32602"),
    ("server/utilities/completion#1", "MUST", "a server offering completion declares the completions capability"),
    ("server/utilities/completion#2", "SHOULD", "completion for an unknown prompt gets -32602"),
    ("server/utilities/logging#1", "MUST", "a server sending log messages declares the logging capability"),
    (
        "server/utilities/logging#2",
        "MAY",
        "after logging/setLevel the server sends nothing below that level",
        "SHOULD",
    ),
    ("server/utilities/logging#3", "SHOULD", "an invalid log level gets -32602"),
    ("server/utilities/pagination#2", "SHOULD", "cursors are stable and bad ones handled gracefully"),
    ("server/utilities/pagination#4", "MUST", "a client uses cursors as opaque tokens"),
    ("server/utilities/pagination#5", "SHOULD", "an invalid cursor gets -32602"),
    # -- client ----------------------------------------------------------------------------------
    ("client/roots#1", "MUST", "a client with roots declares the roots capability"),
    ("client/roots#3", "MUST", "a root URI is a file:// URI"),
    ("client/roots#4", "SHOULD", "a client without roots answers roots/list with -32601"),
    ("client/sampling#4", "MUST NOT", "no tool-enabled sampling to a client without sampling.tools"),
    ("client/sampling#5", "MUST", "a client with sampling declares the sampling capability"),
    ("client/sampling#6", "SHOULD", "includeContext other than none only with sampling.context"),
    ("client/sampling#10", "MUST NOT", "with toolChoice none the model uses no tool"),
    ("client/sampling#13", "SHOULD", "sampling failures use the listed error codes"),
    ("client/elicitation#4", "MUST", "a client with elicitation declares the elicitation capability"),
    ("client/elicitation#6", "MUST NOT", "no elicitation in a mode the client did not declare"),
    ("client/elicitation#16", "MUST", "an elicitation completion names a URL elicitation of the session"),
    ("client/elicitation#34", "MUST", "an elicitation mode the client did not declare gets -32602"),
    ("client/elicitation#56", "SHOULD", "an accepted form answer fits the requested schema"),
    ("schema#25", "MUST", "a tool-enabled sampling request without sampling.tools is refused"),
    ("schema#37", "SHOULD", "a tool's own failure is a result with isError, not a protocol error"),
)


#: the statements of revision 2026-07-28 the modern engine (:mod:`mcp_ref.exchange`) cites, by
#: their ids in ``../shared/spec/2026-07-28/requirements.tsv`` with the revision prefix
MODERN_RULES: Final[dict[str, Rule]] = _table(
    ("2026-07-28:basic/index#6", "MUST NOT", "a requestor never reuses the id of a request in flight"),
    ("2026-07-28:basic/index#13", "MUST", "a resultType the client does not know is invalid"),
    ("2026-07-28:basic/index#53", "MUST", "a request missing a required _meta field gets -32602"),
    ("2026-07-28:basic/index#57", "MUST", "a request needing an undeclared client capability gets -32021"),
    ("2026-07-28:basic/versioning#1", "MUST", "a version the server does not implement gets -32022"),
    (
        "2026-07-28:basic/patterns/mrtr#5",
        "MUST NOT",
        "InputRequiredResult only on tools/call, prompts/get, resources/read",
    ),
    ("2026-07-28:basic/patterns/mrtr#9", "MUST", "input requests are elicitation, sampling or roots requests"),
    ("2026-07-28:basic/patterns/mrtr#12", "MUST", "requestState failing verification is rejected"),
    ("2026-07-28:basic/patterns/mrtr#16", "MUST", "an InputRequiredResult carries input requests or a request state"),
    ("2026-07-28:basic/patterns/mrtr#17", "MUST NOT", "no input request the client's capabilities do not allow"),
    ("2026-07-28:basic/patterns/progress#2", "MUST", "progress tokens are strings or integers"),
    ("2026-07-28:basic/patterns/subscriptions#2", "MUST", "a subscription's acknowledgement comes first"),
    ("2026-07-28:basic/transports/stdio#7", "MUST NOT", "a client writes no JSON-RPC responses"),
    ("2026-07-28:basic/transports/stdio#9", "MUST NOT", "a server writes no JSON-RPC requests"),
    ("2026-07-28:basic/transports/stdio#11", "MUST NOT", "nothing more is sent for a cancelled request"),
    (
        "2026-07-28:basic/transports/streamable-http#27",
        "MUST",
        "a version header that does not match _meta gets -32020",
    ),
    (
        "2026-07-28:basic/transports/streamable-http#29",
        "MUST",
        "a method the server does not implement gets 404 and -32601",
    ),
    ("2026-07-28:server/utilities/logging#2", "MUST", "a server sending log messages declares the logging capability"),
    ("2026-07-28:server/utilities/logging#6", "SHOULD", "an unknown log level in _meta gets -32602"),
)


def rule(requirement: str) -> Rule:
    """The rule for ``requirement``; KeyError names an id mcp_ref does not cite."""
    try:
        return RULES[requirement] if ":" not in requirement else MODERN_RULES[requirement]
    except KeyError:
        raise KeyError(f"mcp_ref has no rule {requirement!r}") from None


def level_of(requirement: str | None) -> str | None:
    """The level a broken ``requirement`` is reported with (None for None)."""
    return None if requirement is None else rule(requirement).effective_level


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
