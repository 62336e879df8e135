"""schema.ts "Initialization": initialize, capabilities, implementation info.

The nested capability objects are anonymous in schema.ts; they get names here
(``RootsCapability``, ``ServerTasksCapability``, ...). Capability objects are
open: the schema says the set is not closed, so unknown keys are kept.
"""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    EXTRA,
    NEW_IN_2025_03_26,
    NEW_IN_2025_06_18,
    NEW_IN_2025_11_25,
    NEW_IN_2026_07_28,
    REMOVED_IN_2026_07_28,
    install_model_methods,
    since,
    until,
)
from ._meta_keys import extension_key_problem
from .jsonrpc import NotificationParams, RequestId, RequestParams, Result

__all__ = [
    "Icon",
    "Icons",
    "BaseMetadata",
    "Implementation",
    "RootsCapability",
    "SamplingCapability",
    "ElicitationCapability",
    "ClientTaskSamplingRequests",
    "ClientTaskElicitationRequests",
    "ClientTaskRequestsCapability",
    "ClientTasksCapability",
    "ClientCapabilities",
    "ListChangedCapability",
    "ResourcesCapability",
    "ServerTaskToolsRequests",
    "ServerTaskRequestsCapability",
    "ServerTasksCapability",
    "ServerCapabilities",
    "InitializeRequestParams",
    "InitializeRequest",
    "InitializeResult",
    "InitializedNotification",
]


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class Icon:
    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class Icons:
    icons: list[Icon] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class BaseMetadata:
    """``name`` for programs; ``title`` for people (falls back to ``name``)."""

    name: str
    title: str | None = None


@frozen(kw_only=True, repr=False, eq=False)
class Implementation:
    name: str
    version: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    description: str | None = field(default=None, metadata=NEW_IN_2025_11_25)
    website_url: str | None = field(default=None, metadata=NEW_IN_2025_11_25)


#: metadata of ``extensions`` (2026-07-28): extension id -> its settings object ({} for
#: none). [2026-07-28:schema#30, #31] ids follow the ``_meta`` key grammar with a
#: prefix; encoding refuses another (decoding keeps what a peer sent)
_EXTENSIONS: dict[str, Any] = {**NEW_IN_2026_07_28, "key_check": extension_key_problem}


# -- client capabilities -------------------------------------------------------


@frozen(kw_only=True, repr=False, eq=False)
class RootsCapability:
    # 2026-07-28 has no roots/list_changed notification: its roots capability is an empty object
    list_changed: bool | None = field(default=None, metadata=REMOVED_IN_2026_07_28)


@frozen(kw_only=True, repr=False, eq=False)
class SamplingCapability:
    context: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    tools: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_11_25)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class ElicitationCapability:
    """An empty object means form mode only (client/elicitation#capabilities)."""

    form: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    url: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_11_25)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ClientTaskSamplingRequests:
    create_message: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ClientTaskElicitationRequests:
    create: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ClientTaskRequestsCapability:
    sampling: ClientTaskSamplingRequests | None = None
    elicitation: ClientTaskElicitationRequests | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ClientTasksCapability:
    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: ClientTaskRequestsCapability | None = None


@frozen(kw_only=True, repr=False, eq=False)
class ClientCapabilities:
    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = field(default=None, metadata=NEW_IN_2025_06_18)
    # core tasks left for the io.modelcontextprotocol/tasks extension in 2026-07-28
    tasks: ClientTasksCapability | None = field(default=None, metadata={**NEW_IN_2025_11_25, **REMOVED_IN_2026_07_28})
    extensions: dict[str, dict[str, Any]] | None = field(default=None, metadata=_EXTENSIONS)
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


# -- server capabilities -------------------------------------------------------


@frozen(kw_only=True, repr=False, eq=False)
class ListChangedCapability:
    """``prompts`` and ``tools`` capabilities."""

    list_changed: bool | None = None


@frozen(kw_only=True, repr=False, eq=False)
class ResourcesCapability:
    subscribe: bool | None = None
    list_changed: bool | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ServerTaskToolsRequests:
    call: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ServerTaskRequestsCapability:
    tools: ServerTaskToolsRequests | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ServerTasksCapability:
    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: ServerTaskRequestsCapability | None = None


@frozen(kw_only=True, repr=False, eq=False)
class ServerCapabilities:
    experimental: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_03_26)
    prompts: ListChangedCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ListChangedCapability | None = None
    tasks: ServerTasksCapability | None = field(default=None, metadata={**NEW_IN_2025_11_25, **REMOVED_IN_2026_07_28})
    extensions: dict[str, dict[str, Any]] | None = field(default=None, metadata=_EXTENSIONS)
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


# -- messages ------------------------------------------------------------------


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class InitializeRequestParams(RequestParams):
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class InitializeRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["initialize"] = "initialize"
    id: RequestId
    params: InitializeRequestParams


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class InitializeResult(Result):
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class InitializedNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: NotificationParams | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
