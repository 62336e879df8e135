"""schema.ts "Sampling"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    MEANINGFUL,
    NEW_IN_2025_11_25,
    REQUIRED_ON_WIRE,
    UNIT_INTERVAL,
    fields_until,
    in_unit_interval,
    install_model_methods,
    older_type,
    since,
)
from .content import AudioContent, ImageContent, Role, TextContent, ToolResultContent, ToolUseContent
from .jsonrpc import RequestId, Result
from .tasks import TaskAugmentedRequestParams
from .tools import Tool

__all__ = [
    "SamplingMessageContentBlock",
    "SamplingContent",
    "SamplingMessage",
    "ModelHint",
    "ModelPreferences",
    "ToolChoice",
    "CreateMessageRequestParams",
    "CreateMessageRequest",
    "CreateMessageResult",
]

SamplingMessageContentBlock = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
#: one block, or (2025-11-25) a list of blocks
SamplingContent = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent | list[SamplingMessageContentBlock]
)


#: the content of a sampling message before 2025-11-25: one text, image or audio block
_OLDER_SAMPLING_CONTENT = older_type("2025-11-25", TextContent | ImageContent | AudioContent)


@frozen(kw_only=True, repr=False, eq=False)
class SamplingMessage:
    role: Role
    content: SamplingContent = field(metadata=_OLDER_SAMPLING_CONTENT)
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_11_25)


@frozen(kw_only=True, repr=False, eq=False)
class ModelHint:
    name: str | None = None


@frozen(kw_only=True, repr=False, eq=False)
class ModelPreferences:
    """Priorities are numbers from 0 to 1."""

    hints: list[ModelHint] | None = None
    cost_priority: float | None = field(default=None, validator=in_unit_interval, metadata=UNIT_INTERVAL)
    speed_priority: float | None = field(default=None, validator=in_unit_interval, metadata=UNIT_INTERVAL)
    intelligence_priority: float | None = field(default=None, validator=in_unit_interval, metadata=UNIT_INTERVAL)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class ToolChoice:
    mode: Literal["auto", "required", "none"] | None = None


@frozen(kw_only=True, repr=False, eq=False)
# 2026-07-28's params are a plain object: no _meta (and no task)
@fields_until("2026-07-28", "meta")
class CreateMessageRequestParams(TaskAugmentedRequestParams):
    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: Literal["none", "thisServer", "allServers"] | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    # sampling with tools is a different request: never silently one without them
    tools: list[Tool] | None = field(default=None, metadata={**NEW_IN_2025_11_25, **MEANINGFUL})
    tool_choice: ToolChoice | None = field(default=None, metadata={**NEW_IN_2025_11_25, **MEANINGFUL})


# In 2026-07-28 this request is only a question inside an InputRequiredResult
# (basic/patterns/mrtr): ``{method, params}``, no JSON-RPC envelope. ``id`` is
# required wherever it exists (the session revisions) but defaults to None so
# that the embedded form decodes.
@frozen(kw_only=True, repr=False, eq=False)
@fields_until("2026-07-28", "jsonrpc", "id")
class CreateMessageRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    id: RequestId | None = field(default=None, metadata=REQUIRED_ON_WIRE)
    params: CreateMessageRequestParams


@frozen(kw_only=True, repr=False, eq=False)
# 2026-07-28: an InputResponse, which extends SamplingMessage, not Result (no resultType)
@fields_until("2026-07-28", "result_type")
class CreateMessageResult(Result):
    """``stop_reason`` is an open string ("endTurn", "stopSequence", "maxTokens", "toolUse", ...)."""

    role: Role
    content: SamplingContent = field(metadata=_OLDER_SAMPLING_CONTENT)
    model: str
    stop_reason: str | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
