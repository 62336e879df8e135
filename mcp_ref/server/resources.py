"""server/resources: static resources, templates, reads and subscriptions.

Sans-IO registry (no trio). A read function returns ``str`` (text),
``bytes`` (sent base64 as a blob, resources#10), one ``TextResourceContents``
/ ``BlobResourceContents`` or a list of them. A template's read function also
gets the variables matched from the URI (RFC 6570, :mod:`.uri_template`).

Subscriptions are kept per session key (whatever object the server uses to
identify a session); :meth:`ResourceRegistry.subscribers` says who to notify
when a resource changes.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from .. import schema as model
from ..basic.meta import check_meta_keys
from ..errors import ErrorCode, MCPError, ProtocolError
from ..schema._base import install_model_methods
from ..schema.content import BlobResourceContents, TextResourceContents
from ..schema.jsonrpc import Result
from ..schema.lifecycle import ResourcesCapability
from ..schema.pagination import PaginatedRequestParams
from .access import check_scopes, permits
from .uri_template import UriTemplate
from .utilities.pagination import DEFAULT_PAGE_SIZE, Positions, paginate

if TYPE_CHECKING:
    from ..schema.resources import (
        ListResourcesResult,
        ListResourceTemplatesResult,
        ReadResourceRequestParams,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
        SubscribeRequestParams,
        UnsubscribeRequestParams,
    )

__all__ = ["ResourceRegistry", "ResourceNotFound", "ReadFunction", "TemplateReadFunction", "Completer", "check_uri"]

ReadFunction = Callable[[Any], Awaitable[Any]]
TemplateReadFunction = Callable[[Any, str, dict[str, str]], Awaitable[Any]]
#: (ctx, partial value, already-resolved arguments) -> candidate values
Completer = Callable[[Any, str, dict[str, str]], Awaitable[list[str]]]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


class ResourceNotFound(MCPError):
    """[server/resources#7] -32002, with the URI in ``data`` (resources#error-handling).

    Raised by a handler: nothing is there (a 2026-07-28 request gets it as -32602,
    the code that replaced -32002). Raised by ``ClientSession.read_resource``: the
    server said so, with either code; ``code`` is the one it sent.
    """

    def __init__(
        self,
        uri: str,
        *,
        code: int = ErrorCode.RESOURCE_NOT_FOUND,
        message: str = "Resource not found",
        data: Any = None,
    ) -> None:
        super().__init__(code, message, {"uri": uri} if data is None else data)
        #: the URI that was read
        self.uri = uri


def check_uri(uri: str) -> None:
    """[server/resources#6, #8] a resource URI is an absolute RFC 3986 URI."""
    if not _SCHEME.match(uri) or any(c.isspace() for c in uri):
        raise ProtocolError(f"Invalid params: {uri!r} is not an absolute URI", ErrorCode.INVALID_PARAMS)


def _contents(uri: str, mime_type: str | None, value: Any) -> list[TextResourceContents | BlobResourceContents]:
    if isinstance(value, TextResourceContents | BlobResourceContents):
        return [value]
    if isinstance(value, str):
        return [TextResourceContents(uri=uri, mime_type=mime_type, text=value)]
    if isinstance(value, bytes | bytearray):
        # [server/resources#10] binary data goes base64-encoded
        return [BlobResourceContents(uri=uri, mime_type=mime_type, blob=base64.b64encode(value).decode("ascii"))]
    if isinstance(value, list):
        # [2026-07-28:server/resources#6] a read may answer with several contents
        out: list[TextResourceContents | BlobResourceContents] = []
        for item in value:
            out.extend(_contents(uri, mime_type, item))
        return out
    raise TypeError(f"a resource read returns str, bytes or resource contents, not {type(value).__name__}")


def _found(uri: str, contents: list[TextResourceContents | BlobResourceContents]) -> ReadResourceResult:
    """The result of a template's read (a registered static resource exists, even when empty)."""
    if not contents:
        # [2026-07-28:server/resources#16] never an empty contents array for what does not exist: a
        # template reader that found nothing at the URI it matched answers that the resource does not exist
        raise ResourceNotFound(uri)
    return model.ReadResourceResult(contents=contents)


@attrs.define(repr=False, eq=False)
class _Static:
    resource: Resource
    read: ReadFunction
    #: the OAuth scopes a request needs to see and read it (none: every request)
    scopes: frozenset[str] = frozenset()


@attrs.define(repr=False, eq=False)
class _Template:
    template: ResourceTemplate
    parsed: UriTemplate
    read: TemplateReadFunction
    completers: dict[str, Completer]
    scopes: frozenset[str] = frozenset()


class ResourceRegistry:
    """What a server offers under ``resources/*``."""

    def __init__(
        self, *, page_size: int = DEFAULT_PAGE_SIZE, subscribe: bool = True, list_changed: bool = True
    ) -> None:
        self.page_size = page_size
        self.subscribe = subscribe
        self.list_changed = list_changed
        self.on_change: Callable[[], None] | None = None
        self._static: dict[str, _Static] = {}
        self._templates: dict[str, _Template] = {}
        # [server/utilities/pagination#2] keyset cursors
        self._static_positions = Positions()
        self._template_positions = Positions()
        self._subscriptions: dict[str, set[Hashable]] = {}

    def __len__(self) -> int:
        return len(self._static) + len(self._templates)

    # -- registration -----------------------------------------------------------------

    def add(self, resource: Resource, read: ReadFunction, *, scopes: Iterable[str] | None = None) -> None:
        """Register a static resource; ``scopes``: only requests whose token grants them see and read it."""
        try:
            check_uri(resource.uri)
        except ProtocolError:
            # (a request's URI is -32602; at registration it is the caller's ValueError)
            raise ValueError(f"resource {resource.uri!r}: not an absolute URI (it needs a scheme)") from None
        needs = check_scopes(scopes, f"resource {resource.uri!r}")
        check_meta_keys(resource.meta, f"resource {resource.uri!r}")
        if resource.uri in self._static:
            raise ValueError(f"a resource {resource.uri!r} is already registered")
        self._static[resource.uri] = _Static(resource, read, needs)
        self._static_positions.add(resource.uri)
        self._changed()

    def add_template(
        self,
        template: ResourceTemplate,
        read: TemplateReadFunction,
        completers: dict[str, Completer] | None = None,
        *,
        scopes: Iterable[str] | None = None,
    ) -> None:
        parsed = UriTemplate(template.uri_template)
        needs = check_scopes(scopes, f"resource template {template.uri_template!r}")
        check_meta_keys(template.meta, f"resource template {template.uri_template!r}")
        unknown = set(completers or {}) - set(parsed.variables)
        if unknown:
            raise ValueError(
                f"resource template {template.uri_template!r}: completers for variables it does not have: "
                f"{sorted(unknown)}"
            )
        self._templates[template.uri_template] = _Template(template, parsed, read, dict(completers or {}), needs)
        self._template_positions.add(template.uri_template)
        self._changed()

    def remove(self, uri: str) -> None:
        del self._static[uri]
        self._static_positions.remove(uri)
        self._changed()

    def remove_template(self, uri_template: str) -> None:
        del self._templates[uri_template]
        self._template_positions.remove(uri_template)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def capability(self) -> ResourcesCapability:
        # [server/resources#1] servers with resources declare the capability
        return ResourcesCapability(subscribe=self.subscribe or None, list_changed=self.list_changed or None)

    # -- handlers ------------------------------------------------------------------------

    async def list_resources(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        cursor = params.cursor if params is not None else None
        # [2026-07-28:server/resources#3] the resources registered now that this request's authorization permits
        resources = {uri: s.resource for uri, s in self._static.items() if permits(ctx, s.scopes)}
        page, nxt = paginate("resources", resources, self._static_positions, cursor, self.page_size)
        return model.ListResourcesResult(resources=page, next_cursor=nxt)

    async def list_templates(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourceTemplatesResult:
        cursor = params.cursor if params is not None else None
        items = {key: t.template for key, t in self._templates.items() if permits(ctx, t.scopes)}
        page, nxt = paginate("templates", items, self._template_positions, cursor, self.page_size)
        return model.ListResourceTemplatesResult(resource_templates=page, next_cursor=nxt)

    async def read(self, ctx: Any, params: ReadResourceRequestParams) -> ReadResourceResult:
        uri = params.uri
        check_uri(uri)
        static = self._static.get(uri)
        if static is not None:
            if not permits(ctx, static.scopes):
                raise ResourceNotFound(uri)  # one this request may not see does not exist for it
            value = await static.read(ctx)
            return model.ReadResourceResult(contents=_contents(uri, static.resource.mime_type, value))
        for t in self._templates.values():
            variables = t.parsed.match(uri)
            if variables is not None:
                if not permits(ctx, t.scopes):
                    raise ResourceNotFound(uri)
                value = await t.read(ctx, uri, variables)
                return _found(uri, _contents(uri, t.template.mime_type, value))
        # [server/resources#7] an unknown resource: -32002 with its URI -- resources#error-handling
        raise ResourceNotFound(uri)

    def template_for(self, uri: str) -> str | None:
        """The URI template a static-less ``uri`` is read through (None: a static resource, or none)."""
        if uri in self._static:
            return None
        return next((key for key, t in self._templates.items() if t.parsed.match(uri) is not None), None)

    def knows(self, uri: str) -> bool:
        return uri in self._static or any(t.parsed.match(uri) is not None for t in self._templates.values())

    async def subscribe_handler(self, ctx: Any, params: SubscribeRequestParams) -> Result:
        check_uri(params.uri)
        if not self.knows(params.uri):
            raise ResourceNotFound(params.uri)
        self._subscriptions.setdefault(params.uri, set()).add(ctx.session)
        return Result()

    async def unsubscribe_handler(self, ctx: Any, params: UnsubscribeRequestParams) -> Result:
        check_uri(params.uri)
        subs = self._subscriptions.get(params.uri)
        if subs is not None:
            subs.discard(ctx.session)
            if not subs:
                del self._subscriptions[params.uri]
        return Result()

    def subscribers(self, uri: str) -> set[Hashable]:
        return set(self._subscriptions.get(uri, ()))

    def forget(self, session: Hashable) -> None:
        """Drop every subscription of a session that ended."""
        for uri in list(self._subscriptions):
            self._subscriptions[uri].discard(session)
            if not self._subscriptions[uri]:
                del self._subscriptions[uri]

    # -- completion --------------------------------------------------------------------------

    async def complete(self, ctx: Any, uri_template: str, name: str, value: str, context: dict[str, str]) -> list[str]:
        t = self._templates.get(uri_template)
        if t is not None and not permits(ctx, t.scopes):
            t = None  # one this request may not see does not exist for it
        # [server/utilities/completion#2] an unknown template: -32602 -- completion#error-handling
        if t is None:
            raise ProtocolError(f"Invalid params: no resource template {uri_template!r}", ErrorCode.INVALID_PARAMS)
        if name not in t.parsed.variables:
            raise ProtocolError(f"Invalid params: {uri_template!r} has no variable {name!r}", ErrorCode.INVALID_PARAMS)
        completer = t.completers.get(name)
        return await completer(ctx, value, context) if completer is not None else []


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals(), hashable=False)
