"""basic/lifecycle: phases, version negotiation and capability rules.

Everything here is data plus small pure functions; the engine
(:mod:`mcp_ref.connection`) consults it on every send and receive.

Phases (basic/lifecycle#lifecycle-phases), per role:

========================  ===========================================================
``AWAITING_INIT``         nothing initialised yet (client: initialize not yet sent;
                          server: initialize not yet received)
``INITIALIZING``          client: initialize sent, no answer yet; server: initialize
                          received, not answered yet
``AWAITING_INITIALIZED``  client: answer received, notifications/initialized not yet
                          sent; server: answered, notifications/initialized not received
``OPERATING``             normal operation
``CLOSED``                the connection ended (or negotiation failed)
========================  ===========================================================

The tables say what may be *sent* and what is *accepted* in each phase; a
method missing from a phase's entry is the protocol error (DESIGN.md section 3).
"""

import enum
from collections.abc import Mapping
from typing import Any, Final

from ..schema._base import LEGACY_REVISIONS

__all__ = [
    "Role",
    "Phase",
    "SUPPORTED_VERSIONS",
    "TASKS_SINCE",
    "negotiate_version",
    "ANY",
    "SEND_REQUESTS",
    "SEND_NOTIFICATIONS",
    "ACCEPT_REQUESTS",
    "ACCEPT_NOTIFICATIONS",
    "phase_allows",
    "REQUEST_CAPABILITY",
    "NOTIFICATION_CAPABILITY",
    "TASK_REQUEST_CAPABILITY",
    "CAPABILITY_SINCE",
    "capability_applies",
    "has_capability",
    "params_capability_problem",
]


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"

    # members are singletons compared by identity: hash them so too (Enum's own
    # __hash__ is Python code, run for every message by the phase tables below)
    __hash__ = object.__hash__


class Phase(enum.Enum):
    AWAITING_INIT = "awaiting-init"
    INITIALIZING = "initializing"
    AWAITING_INITIALIZED = "awaiting-initialized"
    OPERATING = "operating"
    CLOSED = "closed"

    __hash__ = object.__hash__  # as Role's


#: Newest first: what a session (initialize) offers and accepts -- the legacy
#: revisions only, 2025-11-25 down to 2024-11-05: 2026-07-28 has no initialize and
#: is never negotiated here.
SUPPORTED_VERSIONS: Final = tuple(reversed(LEGACY_REVISIONS))
#: the revision that introduced tasks (and task augmentation)
TASKS_SINCE: Final = "2025-11-25"


def negotiate_version(requested: str, supported: tuple[str, ...] = SUPPORTED_VERSIONS) -> str:
    """(server) The version to answer an initialize request with.

    [basic/lifecycle#9] the requested version when we support it;
    [basic/lifecycle#10, #11] otherwise our latest -- lifecycle#version-negotiation.
    """
    return requested if requested in supported else supported[0]


#: Marker: every method is allowed in this phase.
ANY: Final = "*"

_R, _S = Role.CLIENT, Role.SERVER
_P = Phase

# What each side may SEND in each phase.
SEND_REQUESTS: Final[Mapping[tuple[Role, Phase], frozenset[str]]] = {
    # [basic/lifecycle#1, #2] initialization comes first and the client starts it
    (_R, _P.AWAITING_INIT): frozenset({"initialize"}),
    # [basic/lifecycle#5] only pings while the initialize request is unanswered
    (_R, _P.INITIALIZING): frozenset({"ping"}),
    (_R, _P.AWAITING_INITIALIZED): frozenset({"ping"}),
    (_R, _P.OPERATING): frozenset({ANY}),
    (_S, _P.AWAITING_INIT): frozenset(),
    # [basic/lifecycle#6] only pings before notifications/initialized
    (_S, _P.INITIALIZING): frozenset({"ping"}),
    (_S, _P.AWAITING_INITIALIZED): frozenset({"ping"}),
    (_S, _P.OPERATING): frozenset({ANY}),
}

SEND_NOTIFICATIONS: Final[Mapping[tuple[Role, Phase], frozenset[str]]] = {
    (_R, _P.AWAITING_INIT): frozenset(),
    (_R, _P.INITIALIZING): frozenset({"notifications/cancelled"}),
    # [basic/lifecycle#4] the client announces it is ready
    (_R, _P.AWAITING_INITIALIZED): frozenset({"notifications/initialized", "notifications/cancelled"}),
    (_R, _P.OPERATING): frozenset({ANY}),
    (_S, _P.AWAITING_INIT): frozenset(),
    # [basic/lifecycle#6] logging (and progress/cancel bookkeeping) is allowed before initialized
    (_S, _P.INITIALIZING): frozenset({"notifications/message", "notifications/progress", "notifications/cancelled"}),
    (_S, _P.AWAITING_INITIALIZED): frozenset(
        {"notifications/message", "notifications/progress", "notifications/cancelled"}
    ),
    (_S, _P.OPERATING): frozenset({ANY}),
}

# What each side ACCEPTS from its peer in each phase; anything else is refused
# (requests get an error reply, notifications are ignored and reported).
ACCEPT_REQUESTS: Final[Mapping[tuple[Role, Phase], frozenset[str]]] = {
    (_S, _P.AWAITING_INIT): frozenset({"initialize", "ping"}),
    (_S, _P.INITIALIZING): frozenset({"ping"}),
    # Once the server has answered initialize, the client may go on; it is
    # lenient on purpose: on HTTP, requests may overtake notifications/initialized.
    (_S, _P.AWAITING_INITIALIZED): frozenset({ANY}),
    (_S, _P.OPERATING): frozenset({ANY}),
    (_R, _P.AWAITING_INIT): frozenset({"ping"}),
    (_R, _P.INITIALIZING): frozenset({"ping"}),
    (_R, _P.AWAITING_INITIALIZED): frozenset({"ping"}),
    (_R, _P.OPERATING): frozenset({ANY}),
}

ACCEPT_NOTIFICATIONS: Final[Mapping[tuple[Role, Phase], frozenset[str]]] = {
    (_S, _P.AWAITING_INIT): frozenset({"notifications/cancelled"}),
    (_S, _P.INITIALIZING): frozenset({"notifications/cancelled"}),
    (_S, _P.AWAITING_INITIALIZED): frozenset({ANY}),
    (_S, _P.OPERATING): frozenset({ANY}),
    (_R, _P.AWAITING_INIT): frozenset({"notifications/message"}),
    (_R, _P.INITIALIZING): frozenset({"notifications/message", "notifications/progress", "notifications/cancelled"}),
    (_R, _P.AWAITING_INITIALIZED): frozenset({ANY}),
    (_R, _P.OPERATING): frozenset({ANY}),
}


def phase_allows(table: Mapping[tuple[Role, Phase], frozenset[str]], role: Role, phase: Phase, method: str) -> bool:
    allowed = table.get((role, phase), _NOTHING)
    return ANY in allowed or method in allowed


_NOTHING: frozenset[str] = frozenset()


# -- capabilities ---------------------------------------------------------------

# [basic/lifecycle#14] only negotiated capabilities are used. Each request
# method names the capability path the *receiver* must have declared (in the
# JSON form of its capabilities object). Methods absent here need none.
REQUEST_CAPABILITY: Final[Mapping[str, tuple[str, ...]]] = {
    # client -> server
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    # [server/prompts#9] prompts only from a server that declared them -- prompts#implementation-considerations
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "logging/setLevel": ("logging",),
    "completion/complete": ("completions",),
    # server -> client
    "sampling/createMessage": ("sampling",),
    "elicitation/create": ("elicitation",),
    # [client/roots#4, #8] roots/list only to a client that declared roots -- roots#error-handling
    "roots/list": ("roots",),
    # both directions (basic/utilities/tasks#capabilities)
    "tasks/get": ("tasks",),
    "tasks/result": ("tasks",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
}

#: method -> the revision from which its REQUEST_CAPABILITY entry applies: 2024-11-05
#: has no ``completions`` capability, and its servers answer completion/complete without
#: declaring one (2024-11-05 server/utilities/completion has no capabilities section)
CAPABILITY_SINCE: Final[Mapping[str, str]] = {"completion/complete": "2025-03-26"}


def capability_applies(method: str, revision: str) -> bool:
    """Whether ``method``'s REQUEST_CAPABILITY entry binds in ``revision``."""
    since = CAPABILITY_SINCE.get(method)
    return since is None or revision >= since


# Notifications the *sender* may emit only with a capability of its own
# (list_changed flags, logging, subscriptions) or of the receiver.
NOTIFICATION_CAPABILITY: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    # [server/utilities/logging#1] log messages only from a server that declared logging -- logging#capabilities
    "notifications/message": ("own", ("logging",)),
    "notifications/tools/list_changed": ("own", ("tools", "listChanged")),
    "notifications/prompts/list_changed": ("own", ("prompts", "listChanged")),
    "notifications/resources/list_changed": ("own", ("resources", "listChanged")),
    "notifications/resources/updated": ("own", ("resources", "subscribe")),
    "notifications/roots/list_changed": ("own", ("roots", "listChanged")),
    "notifications/elicitation/complete": ("peer", ("elicitation", "url")),
}

# Task augmentation of a request needs the receiver's tasks.requests.<...> entry
# (basic/utilities/tasks#capability-negotiation).
TASK_REQUEST_CAPABILITY: Final[Mapping[str, tuple[str, ...]]] = {
    # [schema#6] a task-augmented tools/call needs the receiver's tasks.requests.tools.call -- schema#task
    "tools/call": ("tasks", "requests", "tools", "call"),
    "sampling/createMessage": ("tasks", "requests", "sampling", "createMessage"),
    "elicitation/create": ("tasks", "requests", "elicitation", "create"),
}


def has_capability(capabilities: Mapping[str, Any] | None, path: tuple[str, ...]) -> bool:
    """Whether a capabilities object (JSON form) declares ``path``.

    An object (even empty) declares the capability; a boolean flag must be true.
    """
    node: Any = capabilities
    for key in path:
        if type(node) is not dict or key not in node:
            return False
        node = node[key]
    return node is not None and node is not False


def params_capability_problem(method: str, params: Any, peer: Mapping[str, Any] | None) -> str | None:
    """What the receiver lacks for *these params* (beyond the method's capability), or None.

    [client/sampling#4] tool-enabled sampling needs ``sampling.tools``;
    [client/sampling#6] context inclusion needs ``sampling.context``;
    [client/elicitation#6] only modes the client declared: ``url`` needs
    ``elicitation.url``, form needs ``elicitation.form`` (an empty
    ``elicitation`` object means form, for clients older than 2025-11-25).
    """
    if method == "sampling/createMessage":
        if getattr(params, "tools", None) is not None or getattr(params, "tool_choice", None) is not None:
            if not has_capability(peer, ("sampling", "tools")):
                return "tool-enabled sampling needs the client's sampling.tools capability"
        # [schema#11, #23] includeContext beyond "none" needs sampling.context -- schema#includecontext
        if getattr(params, "include_context", None) in ("thisServer", "allServers"):
            if not has_capability(peer, ("sampling", "context")):
                return "includeContext other than none needs the client's sampling.context capability"
    elif method == "elicitation/create":
        declared = (peer or {}).get("elicitation") or {}
        if getattr(params, "mode", None) == "url":
            if "url" not in declared:
                return "URL mode elicitation needs the client's elicitation.url capability"
        elif "form" not in declared and "url" in declared:
            return "form mode elicitation needs the client's elicitation.form capability"
    return None
