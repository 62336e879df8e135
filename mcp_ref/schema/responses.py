"""The typed result responses 2026-07-28's schema.ts names, one per request method
(``CallToolResultResponse`` ...): a ``JSONRPCResultResponse`` whose ``result`` is
that method's result -- or, for the methods that may need more input
(basic/patterns/mrtr), that result or an ``InputRequiredResult``.

The engine writes the envelope itself and decodes ``result`` with the type
``mcp_ref.schema.messages.result_type_for(method, revision)`` gives; these
classes are the same shapes as whole messages, for readers of the schema and
for tests.
"""

from typing import Literal

from attrs import frozen

from ._base import install_model_methods, since
from .completion import CompleteResult
from .discover import DiscoverResult
from .jsonrpc import RequestId
from .mrtr import InputRequiredResult
from .prompts import GetPromptResult, ListPromptsResult
from .resources import ListResourcesResult, ListResourceTemplatesResult, ReadResourceResult
from .subscriptions import SubscriptionsListenResult
from .tools import CallToolResult, ListToolsResult

__all__ = [
    "CallToolResultResponse",
    "CompleteResultResponse",
    "DiscoverResultResponse",
    "GetPromptResultResponse",
    "ListPromptsResultResponse",
    "ListResourceTemplatesResultResponse",
    "ListResourcesResultResponse",
    "ListToolsResultResponse",
    "ReadResourceResultResponse",
    "SubscriptionsListenResultResponse",
]


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class CallToolResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: CallToolResult | InputRequiredResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class CompleteResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: CompleteResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class DiscoverResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: DiscoverResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class GetPromptResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: GetPromptResult | InputRequiredResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ListPromptsResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: ListPromptsResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ListResourceTemplatesResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: ListResourceTemplatesResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ListResourcesResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: ListResourcesResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ListToolsResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: ListToolsResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class ReadResourceResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: ReadResourceResult | InputRequiredResult


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class SubscriptionsListenResultResponse:
    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: SubscriptionsListenResult


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
