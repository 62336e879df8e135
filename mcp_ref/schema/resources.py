"""schema.ts "Resources"."""

from typing import Any, Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_06_18, NEW_IN_2025_11_25, NEW_IN_2026_07_28, install_model_methods, required_from, until
from .caching import CacheableResult
from .content import Annotations, BlobResourceContents, TextResourceContents
from .jsonrpc import (
    InputResponsesField,
    NotificationParams,
    RequestId,
    RequestParams,
)
from .lifecycle import Icon
from .pagination import (
    CACHE_SCOPE,
    TTL_MS,
    CacheScope,
    PaginatedRequestParams,
    PaginatedResult,
    ttl_ms_validator,
)

__all__ = [
    "Resource",
    "ResourceTemplate",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ResourceRequestParams",
    "ReadResourceRequestParams",
    "ReadResourceRequest",
    "ReadResourceResult",
    "ResourceListChangedNotification",
    "SubscribeRequestParams",
    "SubscribeRequest",
    "UnsubscribeRequestParams",
    "UnsubscribeRequest",
    "ResourceUpdatedNotificationParams",
    "ResourceUpdatedNotification",
]


@frozen(kw_only=True, repr=False, eq=False)
class Resource:
    uri: str
    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = field(default=None, metadata=NEW_IN_2025_11_25)
    meta: dict[str, Any] | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ListResourcesRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["resources/list"] = "resources/list"
    id: RequestId
    params: PaginatedRequestParams | None = field(default=None, metadata=required_from("2026-07-28"))


@frozen(kw_only=True, repr=False, eq=False)
class ListResourcesResult(PaginatedResult):
    resources: list[Resource]
    # (CacheableResult's fields, 2026-07-28)
    ttl_ms: int | None = field(default=None, validator=ttl_ms_validator, metadata=TTL_MS)
    cache_scope: CacheScope | None = field(default=None, metadata=CACHE_SCOPE)


@frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["resources/templates/list"] = "resources/templates/list"
    id: RequestId
    params: PaginatedRequestParams | None = field(default=None, metadata=required_from("2026-07-28"))


@frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesResult(PaginatedResult):
    resource_templates: list[ResourceTemplate]
    # (CacheableResult's fields, 2026-07-28)
    ttl_ms: int | None = field(default=None, validator=ttl_ms_validator, metadata=TTL_MS)
    cache_scope: CacheScope | None = field(default=None, metadata=CACHE_SCOPE)


@frozen(kw_only=True, repr=False, eq=False)
class ResourceRequestParams(RequestParams):
    """Params of every request about one resource."""

    uri: str


@frozen(kw_only=True, repr=False, eq=False)
class ReadResourceRequestParams(ResourceRequestParams):
    # (2026-07-28: a retry's answers, basic/patterns/mrtr)
    input_responses: InputResponsesField | None = field(default=None, metadata=NEW_IN_2026_07_28)
    request_state: str | None = field(default=None, metadata=NEW_IN_2026_07_28)


@frozen(kw_only=True, repr=False, eq=False)
class ReadResourceRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["resources/read"] = "resources/read"
    id: RequestId
    params: ReadResourceRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class ReadResourceResult(CacheableResult):
    contents: list[TextResourceContents | BlobResourceContents]

    @property
    def text(self) -> str:
        """The text of the text contents, one per line (binary contents left out).

        >>> ReadResourceResult(contents=[TextResourceContents(uri="weather://Oslo", text="sunny")]).text
        'sunny'
        """
        return "\n".join(c.text for c in self.contents if isinstance(c, TextResourceContents))


@frozen(kw_only=True, repr=False, eq=False)
class ResourceListChangedNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/resources/list_changed"] = "notifications/resources/list_changed"
    params: NotificationParams | None = None


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class SubscribeRequestParams(ResourceRequestParams):
    pass


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class SubscribeRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["resources/subscribe"] = "resources/subscribe"
    id: RequestId
    params: SubscribeRequestParams


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class UnsubscribeRequestParams(ResourceRequestParams):
    pass


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class UnsubscribeRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    id: RequestId
    params: UnsubscribeRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotificationParams(NotificationParams):
    uri: str


@frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
