"""Content blocks, annotations and resource contents.

schema.ts spreads these over "Resources" (resource contents), "Prompts"
(``ResourceLink``, ``EmbeddedResource``), "Sampling" (text, image and audio
blocks, the tool-use blocks, ``Annotations``) and the ``ContentBlock`` union;
they live together here because prompts, tools and sampling all use them.

``ResourceLink`` repeats the fields of ``Resource`` instead of inheriting, so
that this module does not depend on :mod:`.resources` (which depends on it),
and so that a field typed ``Resource`` never holds a link.
"""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    NEW_IN_2025_06_18,
    NEW_IN_2025_11_25,
    UNIT_INTERVAL,
    discriminate,
    in_unit_interval,
    install_model_methods,
    older_type,
    since,
)
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

#: ``structuredContent`` is any JSON value from 2026-07-28 on, an object before: encoding
#: for an earlier revision refuses anything else (a JSON ``null`` reads as absent)
STRUCTURED_BEFORE_2026 = older_type("2026-07-28", dict[str, Any] | None)

#: The sender or recipient of messages and data in a conversation.
Role = Literal["user", "assistant"]


@frozen(kw_only=True, repr=False, eq=False)
class Annotations:
    """Hints for clients: who the data is for, how important (0..1), when it changed."""

    audience: list[Role] | None = None
    priority: float | None = field(default=None, validator=in_unit_interval, metadata=UNIT_INTERVAL)
    last_modified: str | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class TextContent:
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ImageContent:
    """``data`` is base64 (kept as the string the peer sent)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-03-26")
class AudioContent:
    """``data`` is base64 (kept as the string the peer sent)."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ResourceContents:
    """What ``resources/read`` returns for one URI; see the two subclasses."""

    uri: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class TextResourceContents(ResourceContents):
    text: str


@frozen(kw_only=True, repr=False, eq=False)
class BlobResourceContents(ResourceContents):
    """``blob`` is base64."""

    blob: str


@frozen(kw_only=True, repr=False, eq=False)
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


@frozen(kw_only=True, repr=False, eq=False)
class EmbeddedResource:
    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


#: What prompts and tool results carry (``ResourceLink`` from 2025-06-18 on).
ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class ToolUseContent:
    """(sampling) The model asks to call a tool; ``meta`` must be kept when sent back."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | None = None


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class ToolResultContent:
    """(sampling) The result of a tool use, matched by ``tool_use_id``."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock]
    #: any JSON value (None: absent); an object before 2026-07-28
    structured_content: Any = field(default=None, metadata=STRUCTURED_BEFORE_2026)
    is_error: bool | None = None
    meta: dict[str, Any] | None = None


def _resource_contents_kind(value: Any) -> type:
    # No tag: ``blob`` marks binary contents, anything else is read as text
    # (so a value with neither reports "text: required field missing").
    return BlobResourceContents if "blob" in value and "text" not in value else TextResourceContents


discriminate(TextResourceContents | BlobResourceContents, _resource_contents_kind)


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
