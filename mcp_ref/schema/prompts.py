"""schema.ts "Prompts"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_06_18, NEW_IN_2025_11_25, NEW_IN_2026_07_28, install_model_methods, required_from
from .content import ContentBlock, Role, TextContent
from .jsonrpc import (
    InputResponsesField,
    NotificationParams,
    RequestId,
    RequestParams,
    Result,
)
from .lifecycle import Icon
from .pagination import CACHE_SCOPE, TTL_MS, CacheScope, PaginatedRequestParams, PaginatedResult, ttl_ms_validator

__all__ = [
    "PromptArgument",
    "Prompt",
    "PromptMessage",
    "ListPromptsRequest",
    "ListPromptsResult",
    "GetPromptRequestParams",
    "GetPromptRequest",
    "GetPromptResult",
    "PromptListChangedNotification",
]


@frozen(kw_only=True, repr=False, eq=False)
class PromptArgument:
    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    description: str | None = None
    required: bool | None = None


@frozen(kw_only=True, repr=False, eq=False)
class Prompt:
    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class PromptMessage:
    role: Role
    content: ContentBlock


@frozen(kw_only=True, repr=False, eq=False)
class ListPromptsRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["prompts/list"] = "prompts/list"
    id: RequestId
    params: PaginatedRequestParams | None = field(default=None, metadata=required_from("2026-07-28"))


@frozen(kw_only=True, repr=False, eq=False)
class ListPromptsResult(PaginatedResult):
    prompts: list[Prompt]
    # (CacheableResult's fields, 2026-07-28)
    ttl_ms: int | None = field(default=None, validator=ttl_ms_validator, metadata=TTL_MS)
    cache_scope: CacheScope | None = field(default=None, metadata=CACHE_SCOPE)


@frozen(kw_only=True, repr=False, eq=False)
class GetPromptRequestParams(RequestParams):
    name: str
    arguments: dict[str, str] | None = None
    # (2026-07-28: a retry's answers, basic/patterns/mrtr)
    input_responses: InputResponsesField | None = field(default=None, metadata=NEW_IN_2026_07_28)
    request_state: str | None = field(default=None, metadata=NEW_IN_2026_07_28)


@frozen(kw_only=True, repr=False, eq=False)
class GetPromptRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["prompts/get"] = "prompts/get"
    id: RequestId
    params: GetPromptRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class GetPromptResult(Result):
    messages: list[PromptMessage]
    description: str | None = None

    @property
    def text(self) -> str:
        """The text of the messages' text contents, one per line (other contents left out).

        >>> GetPromptResult(messages=[PromptMessage(role="user", content=TextContent(text="Weather?"))]).text
        'Weather?'
        """
        return "\n".join(m.content.text for m in self.messages if isinstance(m.content, TextContent))


@frozen(kw_only=True, repr=False, eq=False)
class PromptListChangedNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/prompts/list_changed"] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
