"""Content blocks, annotations and resource contents (schema.ts "Content",
"Resources" contents, and the sampling tool-use blocks).

``ResourceLink`` repeats the fields of ``Resource`` instead of inheriting, so
that this module does not depend on :mod:`.resources` (which depends on it).
"""

from typing import Any, Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_06_18, NEW_IN_2025_11_25, discriminate, since
from .lifecycle import Icon

__all__ = [
    "Role",
    "Annotations",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceContents",
    "TextResourceContents",
    "BlobResourceContents",
    "ResourceLink",
    "EmbeddedResource",
    "ContentBlock",
    "ToolUseContent",
    "ToolResultContent",
]

#: The sender or recipient of messages and data in a conversation.
Role = Literal["user", "assistant"]


@frozen(kw_only=True)
class Annotations:
    """Hints for clients: who the data is for, how important, when it changed."""

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True)
class TextContent:
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True)
class ImageContent:
    """``data`` is base64."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True)
class AudioContent:
    """``data`` is base64."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True)
class ResourceContents:
    uri: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True)
class TextResourceContents(ResourceContents):
    text: str


@frozen(kw_only=True)
class BlobResourceContents(ResourceContents):
    """``blob`` is base64."""

    blob: str


@frozen(kw_only=True)
@since("2025-06-18")
class ResourceLink:
    """A resource the server can read, named in a result (not embedded)."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    meta: dict[str, Any] | None = None


@frozen(kw_only=True)
class EmbeddedResource:
    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


@frozen(kw_only=True)
@since("2025-11-25")
class ToolUseContent:
    """(sampling) The model asks to call a tool."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | None = None


@frozen(kw_only=True)
@since("2025-11-25")
class ToolResultContent:
    """(sampling) The result of a tool use, matched by ``tool_use_id``."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = None


def _resource_contents_kind(value: Any) -> type | None:
    return BlobResourceContents if "blob" in value and "text" not in value else TextResourceContents


discriminate(TextResourceContents | BlobResourceContents, _resource_contents_kind)
