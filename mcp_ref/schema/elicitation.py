"""schema.ts elicitation types (``elicitation/create``; new in 2025-06-18).

The requested schema is a restricted subset of JSON Schema: a flat object
whose properties are :data:`PrimitiveSchemaDefinition` values. The
primitive-schema union has no single tag, so it registers a discriminator
that looks at ``type`` and at which of ``enum`` / ``enumNames`` / ``oneOf`` /
``items`` is present.

The schema classes are *open* (``extra``): they are pieces of JSON Schema, and
keywords outside the subset (``pattern``, ``$comment``, ...) are legal JSON
Schema that a form renderer may honour, so they survive a round trip.
"""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    EXTRA,
    NEW_IN_2025_11_25,
    NULLABLE,
    REMOVED_IN_2026_07_28,
    REQUIRED_ON_WIRE,
    discriminate,
    fields_until,
    install_model_methods,
    older_type,
    since,
    until,
)
from .jsonrpc import NotificationParams, RequestId, Result
from .tasks import TaskAugmentedRequestParams

__all__ = [
    "StringSchema",
    "NumberSchema",
    "BooleanSchema",
    "EnumOption",
    "UntitledSingleSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "StringEnumItems",
    "TitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "TitledMultiSelectEnumSchema",
    "LegacyTitledEnumSchema",
    "SingleSelectEnumSchema",
    "MultiSelectEnumSchema",
    "EnumSchema",
    "PrimitiveSchemaDefinition",
    "ElicitationRequestedSchema",
    "ElicitRequestFormParams",
    "ElicitRequestURLParams",
    "ElicitRequestParams",
    "ElicitRequest",
    "ElicitContentValue",
    "ElicitResult",
    "ElicitationCompleteNotificationParams",
    "ElicitationCompleteNotification",
    "URLElicitationRequiredErrorData",
    "URLElicitationRequiredErrorDetail",
    "URLElicitationRequiredError",
]


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class StringSchema:
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = field(default=None, metadata=NEW_IN_2025_11_25)
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class NumberSchema:
    type: Literal["number", "integer"]
    title: str | None = None
    description: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    default: float | None = field(default=None, metadata=NEW_IN_2025_11_25)
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class BooleanSchema:
    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class EnumOption:
    """One titled choice: ``const`` is the value, ``title`` what people see."""

    const: str
    title: str
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class UntitledSingleSelectEnumSchema:
    """Named in 2025-11-25; the same JSON is a 2025-06-18 ``EnumSchema`` without
    ``enumNames``, so it is written in that form there (without ``default``)."""

    type: Literal["string"] = "string"
    enum: list[str]
    title: str | None = None
    description: str | None = None
    default: str | None = field(default=None, metadata=NEW_IN_2025_11_25)
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class TitledSingleSelectEnumSchema:
    type: Literal["string"] = "string"
    one_of: list[EnumOption]
    title: str | None = None
    description: str | None = None
    default: str | None = None
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class StringEnumItems:
    type: Literal["string"] = "string"
    enum: list[str]
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class TitledEnumItems:
    any_of: list[EnumOption]
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class UntitledMultiSelectEnumSchema:
    type: Literal["array"] = "array"
    items: StringEnumItems
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
class TitledMultiSelectEnumSchema:
    type: Literal["array"] = "array"
    items: TitledEnumItems
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class LegacyTitledEnumSchema:
    """The 2025-06-18 ``EnumSchema`` (``enumNames`` is deprecated in 2025-11-25)."""

    type: Literal["string"] = "string"
    enum: list[str]
    enum_names: list[str] | None = None
    title: str | None = None
    description: str | None = None
    default: str | None = field(default=None, metadata=NEW_IN_2025_11_25)
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


SingleSelectEnumSchema = UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
MultiSelectEnumSchema = UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema
EnumSchema = (
    UntitledSingleSelectEnumSchema
    | TitledSingleSelectEnumSchema
    | UntitledMultiSelectEnumSchema
    | TitledMultiSelectEnumSchema
    | LegacyTitledEnumSchema
)
PrimitiveSchemaDefinition = (
    StringSchema
    | NumberSchema
    | BooleanSchema
    | UntitledSingleSelectEnumSchema
    | TitledSingleSelectEnumSchema
    | UntitledMultiSelectEnumSchema
    | TitledMultiSelectEnumSchema
    | LegacyTitledEnumSchema
)


def _single_select(value: Any) -> type:
    # type "string" with options: titled (oneOf), legacy (enumNames) or plain
    # enum. An enum without enumNames is read as the untitled single select:
    # the legacy shape without titles is the same JSON (spec_notes/schema.md).
    if "oneOf" in value:
        return TitledSingleSelectEnumSchema
    if "enumNames" in value:
        return LegacyTitledEnumSchema
    return UntitledSingleSelectEnumSchema


def _multi_select(value: Any) -> type:
    items = value.get("items")
    return TitledMultiSelectEnumSchema if type(items) is dict and "anyOf" in items else UntitledMultiSelectEnumSchema


def _choose_primitive(value: Any) -> type | None:
    kind = value.get("type")
    if kind == "string":
        return _single_select(value) if "oneOf" in value or "enum" in value else StringSchema
    if kind in ("number", "integer"):
        return NumberSchema
    if kind == "boolean":
        return BooleanSchema
    if kind == "array":
        return _multi_select(value)
    return None


def _choose_enum(value: Any) -> type | None:
    kind = value.get("type")
    if kind == "string":
        return _single_select(value)
    if kind == "array":
        return _multi_select(value)
    return None


def _choose_single(value: Any) -> type | None:
    if value.get("type") != "string":
        return None
    return TitledSingleSelectEnumSchema if "oneOf" in value else UntitledSingleSelectEnumSchema


def _choose_multi(value: Any) -> type | None:
    return _multi_select(value) if value.get("type") == "array" else None


discriminate(PrimitiveSchemaDefinition, _choose_primitive, key="type")
discriminate(EnumSchema, _choose_enum, key="type")
discriminate(SingleSelectEnumSchema, _choose_single, key="type")
discriminate(MultiSelectEnumSchema, _choose_multi, key="type")


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class ElicitationRequestedSchema:
    """A flat object schema of primitive properties."""

    type: Literal["object"] = "object"
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None
    schema: str | None = field(default=None, metadata={"wire": "$schema", **NEW_IN_2025_11_25})
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
# 2026-07-28's params are a plain object: no _meta (and no task)
@fields_until("2026-07-28", "meta")
class ElicitRequestFormParams(TaskAugmentedRequestParams):
    """Form mode; ``mode`` may be omitted (form is the default)."""

    message: str
    requested_schema: ElicitationRequestedSchema
    mode: Literal["form"] | None = field(default=None, metadata=NEW_IN_2025_11_25)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@fields_until("2026-07-28", "meta")
class ElicitRequestURLParams(TaskAugmentedRequestParams):
    """URL mode: the user completes the interaction out of band at ``url``.

    ``elicitation_id`` is opaque: kept and compared as the exact string sent. It is
    required in 2025-11-25 and gone in 2026-07-28 (a retry, not a completion
    notification, tells the server the interaction is over); so it defaults to
    None, and encoding for 2025-11-25 refuses None.
    """

    mode: Literal["url"] = "url"
    message: str
    url: str
    elicitation_id: str | None = field(default=None, metadata={**REMOVED_IN_2026_07_28, **REQUIRED_ON_WIRE})


ElicitRequestParams = ElicitRequestURLParams | ElicitRequestFormParams


# In 2026-07-28 this request is only a question inside an InputRequiredResult
# (basic/patterns/mrtr): ``{method, params}``, no JSON-RPC envelope. ``id`` is
# required wherever it exists (the session revisions) but defaults to None so
# that the embedded form decodes.
@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
@fields_until("2026-07-28", "jsonrpc", "id")
class ElicitRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["elicitation/create"] = "elicitation/create"
    id: RequestId | None = field(default=None, metadata=REQUIRED_ON_WIRE)
    params: ElicitRequestParams


#: A submitted form value. schema.ts types numbers as ``number``; schema.json
#: narrows them to integers, which would refuse 2.5 typed into a "number"
#: field -- mcp_ref follows schema.ts (spec_notes/schema.md).
ElicitContentValue = str | int | float | bool | list[str]


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
# 2026-07-28: an InputResponse, not a Result (no resultType, no _meta)
@fields_until("2026-07-28", "result_type", "meta")
class ElicitResult(Result):
    action: Literal["accept", "decline", "cancel"]
    # lists of strings (multi-select answers) are new in 2025-11-25
    content: dict[str, ElicitContentValue] | None = field(
        default=None, metadata=older_type("2025-11-25", dict[str, str | int | float | bool] | None)
    )


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ElicitationCompleteNotificationParams(NotificationParams):
    """Named here; inline in schema.ts (which lists no ``_meta``, see spec_notes/schema.md)."""

    elicitation_id: str


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class ElicitationCompleteNotification:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitationCompleteNotificationParams


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class URLElicitationRequiredErrorData:
    elicitations: list[ElicitRequestURLParams]
    extra: dict[str, Any] = field(factory=dict, metadata=EXTRA)


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class URLElicitationRequiredErrorDetail:
    """The ``error`` member: code -32042 and the elicitations to complete."""

    code: Literal[-32042] = -32042
    message: str
    data: URLElicitationRequiredErrorData


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-11-25")
@until("2026-07-28")
class URLElicitationRequiredError:
    jsonrpc: Literal["2.0"] = "2.0"
    error: URLElicitationRequiredErrorDetail
    id: RequestId | None = field(default=None, metadata=NULLABLE)  # as JSONRPCErrorResponse.id


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
