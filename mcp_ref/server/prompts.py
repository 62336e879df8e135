"""server/prompts: the prompt registry, prompts/list and prompts/get.

A prompt function takes ``(ctx, arguments)`` (a dict of strings, already
checked against the prompt's declared arguments) and returns a
:class:`GetPromptResult`, a list of :class:`PromptMessage`, or a string (one
user text message).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .. import schema as model
from ..basic.meta import check_meta_keys
from ..errors import ErrorCode, ProtocolError
from ..schema._base import install_model_methods
from ..schema.content import AudioContent, ImageContent, TextContent
from ..schema.lifecycle import ListChangedCapability
from ..schema.pagination import PaginatedRequestParams
from .access import check_scopes, permits
from .resources import Completer
from .utilities.pagination import DEFAULT_PAGE_SIZE, Positions, paginate

if TYPE_CHECKING:
    from ..schema.prompts import GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt

__all__ = ["PromptRegistry", "PromptFunction", "as_get_prompt_result", "check_media", "check_embedded_resource"]

PromptFunction = Callable[[Any, dict[str, str]], Awaitable[Any]]

# type "/" subtype, RFC 6838 restricted names, optional parameters
_MIME_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MIME_TYPE = re.compile(rf"{_MIME_NAME}/{_MIME_NAME}(?:\s*;.*)?", re.DOTALL)


def check_media(block: Any, where: str) -> None:
    """Raise ValueError if image or audio content is not base64 with a valid MIME type."""
    if not isinstance(block, ImageContent | AudioContent):
        return
    try:
        binascii.a2b_base64(block.data, strict_mode=True)
    except binascii.Error as e:
        # [server/prompts#3, #4] image and audio data are base64
        raise ValueError(f"{where}: {block.type} data is not valid base64 ({e})") from None
    if not _MIME_TYPE.fullmatch(block.mime_type):
        # [server/prompts#3, #4] ... with a valid MIME type
        raise ValueError(f"{where}: {block.mime_type!r} is not a valid MIME type")


#: RFC 3986 section 3: a scheme, a colon, and something after it
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]+")


def check_embedded_resource(block: Any, where: str) -> None:
    """Raise ValueError unless an embedded resource has a valid URI, a MIME type and text or a
    base64 blob (server/prompts#5). (The schema leaves ``mimeType`` optional on resource contents
    in general; a resource embedded in a prompt message must have one.)"""
    if not isinstance(block, model.EmbeddedResource):
        return
    resource = block.resource
    # [server/prompts#5] a valid resource URI -- prompts#embedded-resources
    if not _URI.fullmatch(resource.uri):
        raise ValueError(f"{where}: embedded resource URI {resource.uri!r} is not a valid URI")
    # [server/prompts#5] the appropriate MIME type
    if resource.mime_type is None or not _MIME_TYPE.fullmatch(resource.mime_type):
        raise ValueError(
            f"{where}: embedded resource {resource.uri!r} needs a valid mimeType, not {resource.mime_type!r}"
        )
    # [server/prompts#5] text, or a base64 blob
    if isinstance(resource, model.BlobResourceContents):
        try:
            binascii.a2b_base64(resource.blob, strict_mode=True)
        except binascii.Error as e:
            raise ValueError(f"{where}: embedded resource {resource.uri!r}: blob is not valid base64 ({e})") from None


def as_get_prompt_result(value: Any, description: str | None) -> GetPromptResult:
    """Normalise what a prompt function returned; ValueError for messages the spec forbids."""
    if isinstance(value, model.GetPromptResult):
        result = value
    elif isinstance(value, str):
        return model.GetPromptResult(
            description=description, messages=[model.PromptMessage(role="user", content=TextContent(text=value))]
        )
    elif isinstance(value, Sequence):
        result = model.GetPromptResult(description=description, messages=list(value))
    else:
        raise TypeError(f"a prompt returns GetPromptResult, str or a list of PromptMessage, not {type(value).__name__}")
    for i, message in enumerate(result.messages):
        # [server/prompts#10] what a prompt returns is checked too -- prompts#security
        if message.role not in ("user", "assistant"):
            # prompt messages come from the user or the assistant; there is no "system" role
            raise ValueError(f"messages[{i}]: role is 'user' or 'assistant', not {message.role!r}")
        check_media(message.content, f"messages[{i}]")
        check_embedded_resource(message.content, f"messages[{i}]")
    return result


@attrs.define(repr=False, eq=False)
class _Entry:
    prompt: Prompt
    fn: PromptFunction
    completers: dict[str, Completer]
    #: the OAuth scopes a request needs to see, get and complete it (none: every request)
    scopes: frozenset[str] = frozenset()


class PromptRegistry:
    def __init__(self, *, page_size: int = DEFAULT_PAGE_SIZE, list_changed: bool = True) -> None:
        self.page_size = page_size
        self.list_changed = list_changed
        self.on_change: Callable[[], None] | None = None
        self._entries: dict[str, _Entry] = {}
        self._positions = Positions()  # [server/utilities/pagination#2] keyset cursors

    def __len__(self) -> int:
        return len(self._entries)

    def add(
        self,
        prompt: Prompt,
        fn: PromptFunction,
        completers: dict[str, Completer] | None = None,
        *,
        scopes: Iterable[str] | None = None,
    ) -> None:
        if prompt.name in self._entries:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        check_meta_keys(prompt.meta, f"prompt {prompt.name!r}")
        for i, argument in enumerate(prompt.arguments or ()):
            if not isinstance(argument, model.PromptArgument):
                raise TypeError(f"prompt {prompt.name!r}: arguments[{i}] is a PromptArgument, not {argument!r}")
        declared = {a.name for a in prompt.arguments or ()}
        unknown = set(completers or {}) - declared
        if unknown:
            raise ValueError(f"prompt {prompt.name!r}: completers for arguments it does not declare: {sorted(unknown)}")
        needs = check_scopes(scopes, f"prompt {prompt.name!r}")
        self._entries[prompt.name] = _Entry(prompt, fn, dict(completers or {}), needs)
        self._positions.add(prompt.name)
        if self.on_change is not None:
            self.on_change()

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def remove(self, name: str) -> None:
        del self._entries[name]
        self._positions.remove(name)
        if self.on_change is not None:
            self.on_change()

    def capability(self) -> ListChangedCapability:
        # [server/prompts#1] servers with prompts declare the capability
        return ListChangedCapability(list_changed=self.list_changed or None)

    async def list_prompts(self, ctx: Any, params: PaginatedRequestParams | None) -> ListPromptsResult:
        cursor = params.cursor if params is not None else None
        # [2026-07-28:server/prompts#3] the prompts registered now that this request's authorization permits
        prompts = {name: e.prompt for name, e in self._entries.items() if permits(ctx, e.scopes)}
        page, nxt = paginate("prompts", prompts, self._positions, cursor, self.page_size)
        return model.ListPromptsResult(prompts=page, next_cursor=nxt)

    def _entry(self, ctx: Any, name: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is not None and not permits(ctx, entry.scopes):
            entry = None  # one this request may not see does not exist for it
        if entry is None:
            # [server/prompts#6] invalid prompt name: -32602
            raise ProtocolError(f"Invalid params: unknown prompt {name!r}", ErrorCode.INVALID_PARAMS)
        return entry

    async def get(self, ctx: Any, params: GetPromptRequestParams) -> GetPromptResult:
        entry = self._entry(ctx, params.name)
        arguments = dict(params.arguments or {})
        declared = {a.name: a for a in entry.prompt.arguments or ()}
        # [server/prompts#6, #7, #10] arguments are checked before the prompt runs -- prompts#security
        missing = sorted(n for n, a in declared.items() if a.required and n not in arguments)
        if missing:
            raise ProtocolError(f"Invalid params: missing required arguments {missing}", ErrorCode.INVALID_PARAMS)
        unknown = sorted(set(arguments) - set(declared))
        if unknown:
            raise ProtocolError(f"Invalid params: unknown arguments {unknown}", ErrorCode.INVALID_PARAMS)
        value = await entry.fn(ctx, arguments)
        return as_get_prompt_result(value, entry.prompt.description)

    async def complete(self, ctx: Any, prompt: str, name: str, value: str, context: dict[str, str]) -> list[str]:
        entry = self._entry(ctx, prompt)
        # [server/utilities/completion#2] an argument the prompt lacks: -32602 -- completion#error-handling
        if name not in {a.name for a in entry.prompt.arguments or ()}:
            raise ProtocolError(f"Invalid params: prompt {prompt!r} has no argument {name!r}", ErrorCode.INVALID_PARAMS)
        completer = entry.completers.get(name)
        return await completer(ctx, value, context) if completer is not None else []


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
