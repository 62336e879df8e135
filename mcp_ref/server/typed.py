"""Typed handlers: what goes on the wire derived from a handler's annotations.

Explicit about what goes on the wire. A handler takes the request context
first; the parameters after it are the tool's arguments, each with its type
(a *typed* handler, :class:`TypedTool`)::

    @attrs.frozen
    class Sum:
        total: float

    @server.tool()
    async def add(ctx: RequestContext, a: float, b: float = 0) -> Sum:
        return Sum(a + b)

Its ``inputSchema`` is derived from the parameters, its ``outputSchema`` from
the return annotation when that is an attrs class, a dataclass or a
``TypedDict``; the arguments arrive structured (``a`` is a ``float``, an
attrs class an instance of it) and the returned object is sent as
``structuredContent`` (and as JSON text, server/tools#15). The derived
schemas are ordinary data: ``server.tools["add"].input_schema`` shows what
goes on the wire, and an explicit ``input_schema=`` / ``output_schema=``
given to ``@server.tool`` replaces them.

A tool that returns a plain JSON value rather than text or an object
(``-> list[str]``, ``-> list[Forecast]``, ``-> int``, ``-> bool``, an ``Enum``)
sends it as structured content too, wrapped: ``{"result": value}``, with the
output schema ``{"type": "object", "properties": {"result": ...}, "required":
["result"]}``, the same in every revision (2025 requires an object there;
the official Python SDK wraps the same way). A list of content blocks
(``-> list[TextContent]``, a bare ``list``) stays content.

The other form, ``async def fn(ctx, arguments)``, takes the whole arguments
dict and derives no input schema: it is recognised by that one parameter
name, ``arguments`` (:func:`is_typed_handler`). A typed tool with an argument
of that name makes it keyword-only: ``(ctx, *, arguments: str)``; keyword-only
parameters (``(ctx, *, a: float)``) are typed parameters anyway.

Checked at registration, with a TypeError that says what to write instead:
a first parameter that is not the context (``async def search(query: str)``,
the official SDK's shape: there the context is any parameter annotated
``Context``, here it is always the first), ``**kwargs``, a parameter without
annotation, and a return annotation whose values could never be sent
(``-> None``, ``-> set[str]``, a pydantic model: a tool returns ``str``, a dict,
a list of content blocks, a ``CallToolResult``, a structured class, or a plain
JSON value; :func:`result_type`). An unannotated return is not checked.

What an annotation becomes (:func:`json_schema`):

========================================  ==============================================
``str`` ``int`` ``float`` ``bool``        ``"type"`` string, integer, number, boolean
``None``                                  ``{"type": "null"}``
``Literal["a", "b"]``, an ``Enum``        ``"enum"`` of the values (with their ``"type"``)
``X | None``, ``Optional[X]``, unions     ``"anyOf"``
``list[X]``, ``Sequence[X]``              an array of X (``set[X]``: with ``uniqueItems``)
``tuple[X, ...]``, ``tuple[X, Y]``        an array of X; ``prefixItems`` X, Y
``dict[str, X]``                          an object whose values are X
a ``TypedDict``, attrs class, dataclass   an object with their fields as properties
``Annotated[X, "text"]``                  X with ``"description": "text"``
``Any``                                   ``{}`` (anything)
========================================  ==============================================

A parameter or field with a default is optional and its JSON-able default is
shown (``"default"``); objects refuse properties they do not declare
(``additionalProperties: false``): a handler could not receive them. An attrs
field's ``metadata={"description": ...}`` becomes its description. The output
is JSON Schema 2020-12, the default dialect of 2025-11-25 (basic/index
json-schema-usage), nested classes inline (a recursive type is refused), so
that only keywords the 2025-06-18 and 2025-03-26 readers share appear, apart
from ``prefixItems`` for fixed-length tuples.

A typed prompt, ``async def ask(ctx, city: str, style: str = "short")``,
declares one prompt argument per parameter (required unless it has a
default; ``Annotated[str, "text"]`` gives its description) and gets them as
keyword arguments (:class:`TypedPrompt`). A typed resource template handler,
``async def report(ctx, city: str)``, takes the template's variables as
keyword arguments (:class:`TypedTemplate`). Both are strings on the wire.

Tool arguments are structured with a converter of this module's own (never the
data model's): primitives are taken strictly (``"3"`` is not an integer, ``true``
not a number), unknown keys are refused, and a problem becomes a tool
execution error the model reads (server/tools#20), as a schema failure does.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import json
import types
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Required, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.v import format_exception

from .. import schema as model
from ..schema._base import install_model_methods
from ..schema.tools import CallToolResult
from .tools import ToolError

if TYPE_CHECKING:
    pass

__all__ = [
    "TypedTool",
    "TypedPrompt",
    "TypedTemplate",
    "StructuredResults",
    "json_schema",
    "is_typed_handler",
    "result_type",
    "structured_schema",
    "structured_value",
]

_NONE = type(None)
_JSON_TYPES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string", _NONE: "null"}


def json_schema(tp: Any) -> dict[str, Any]:
    """The JSON Schema (2020-12) of values of the annotation ``tp``.

    >>> json_schema(int)
    {'type': 'integer'}
    >>> json_schema(list[str] | None)
    {'anyOf': [{'type': 'array', 'items': {'type': 'string'}}, {'type': 'null'}]}
    >>> json_schema(Literal["celsius", "fahrenheit"])
    {'type': 'string', 'enum': ['celsius', 'fahrenheit']}

    TypeError names an annotation that has no JSON form.
    """
    return _schema(tp, ())


def _schema(tp: Any, seen: tuple[type, ...]) -> dict[str, Any]:
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is typing.Annotated:
        schema = _schema(args[0], seen)
        notes = [m for m in args[1:] if isinstance(m, str)]
        return {**schema, "description": " ".join(notes)} if notes else schema
    if tp is Any or tp is object:
        return {}
    if tp in _JSON_TYPES:
        return {"type": _JSON_TYPES[tp]}
    if tp is None:
        return {"type": "null"}
    if origin is Literal:
        return _enum(list(args))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum([member.value for member in tp])
    if origin is Union or origin is types.UnionType:
        return {"anyOf": [_schema(arg, seen) for arg in args]}
    if origin in (list, Sequence, typing.Sequence) or tp in (list, Sequence):
        return {"type": "array", "items": _schema(args[0], seen) if args else {}}
    if origin in (set, frozenset) or tp in (set, frozenset):
        return {"type": "array", "items": _schema(args[0], seen) if args else {}, "uniqueItems": True}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema(args[0], seen)}
        prefix = [_schema(arg, seen) for arg in args]
        return {"type": "array", "prefixItems": prefix, "items": False, "minItems": len(args)}
    if origin in (dict, Mapping, typing.Mapping) or tp in (dict, Mapping):
        if args and args[0] is not str:
            raise TypeError(f"{_name(tp)}: JSON object keys are strings, not {_name(args[0])}")
        return {"type": "object", "additionalProperties": _schema(args[1], seen) if args else {}}
    if typing.is_typeddict(tp):
        return _typed_dict(tp, seen)
    if isinstance(tp, type) and attrs.has(tp):
        return _attrs_class(tp, seen)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp, seen)
    raise TypeError(f"{_name(tp)} has no JSON Schema here (see mcp_ref.server.typed for the supported types)")


def _enum(values: list[Any]) -> dict[str, Any]:
    kinds = {_JSON_TYPES.get(type(v)) for v in values}
    if None in kinds:
        raise TypeError(f"enumerated values must be JSON scalars, not {values!r}")
    return {"type": kinds.pop(), "enum": values} if len(kinds) == 1 else {"enum": values}


def _enter(cls: type, seen: tuple[type, ...]) -> tuple[type, ...]:
    if cls in seen:
        raise TypeError(f"{cls.__qualname__} refers to itself: recursive types are not derived (give the schema)")
    return (*seen, cls)


def _typed_dict(cls: type, seen: tuple[type, ...]) -> dict[str, Any]:
    inner = _enter(cls, seen)
    hints = typing.get_type_hints(cls, include_extras=True)
    properties = {name: _field_schema(cls, name, _strip_required(hint), inner) for name, hint in hints.items()}
    required = [name for name in hints if name in cls.__required_keys__]  # type: ignore[attr-defined]
    return _object(properties, required)


def _field_schema(cls: type, name: str, hint: Any, seen: tuple[type, ...]) -> dict[str, Any]:
    """A field's schema; TypeError saying which field has no JSON form."""
    try:
        return _schema(hint, seen)
    except TypeError as e:
        raise TypeError(f"{cls.__qualname__}.{name}: {e}") from None


def _strip_required(hint: Any) -> Any:
    while get_origin(hint) in (Required, NotRequired):
        hint = get_args(hint)[0]
    return hint


def _attrs_class(cls: type, seen: tuple[type, ...]) -> dict[str, Any]:
    inner = _enter(cls, seen)
    attrs.resolve_types(cls)
    properties: dict[str, Any] = {}
    required = []
    for field in attrs.fields(cls):
        if field.type is None:
            raise TypeError(f"{cls.__qualname__}.{field.name} has no annotation")
        schema = _field_schema(cls, field.name, field.type, inner)
        if "description" in field.metadata:
            schema["description"] = field.metadata["description"]
        if field.default is attrs.NOTHING:
            required.append(field.name)
        elif not isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            schema = _with_default(schema, field.default)
        properties[field.name] = schema
    return _object(properties, required)


def _dataclass(cls: type, seen: tuple[type, ...]) -> dict[str, Any]:
    inner = _enter(cls, seen)
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: dict[str, Any] = {}
    required = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue  # not an argument of the class: cattrs neither reads nor needs it
        schema = _field_schema(cls, field.name, hints[field.name], inner)
        if "description" in field.metadata:
            schema["description"] = field.metadata["description"]
        if field.default is not dataclasses.MISSING:
            schema = _with_default(schema, field.default)
        elif field.default_factory is dataclasses.MISSING:
            required.append(field.name)
        properties[field.name] = schema
    return _object(properties, required)


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _with_default(schema: dict[str, Any], default: Any) -> dict[str, Any]:
    """Show a default that has a JSON form (an Enum member as its value)."""
    value = default.value if isinstance(default, enum.Enum) else default
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return schema
    return {**schema, "default": value}


def _spell(tp: Any) -> str:
    """An annotation as written (``list[str]``, ``None``, ``Forecast``)."""
    if tp is _NONE or tp is None:
        return "None"
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        return " | ".join(_spell(arg) for arg in args)
    if origin is not None and args:
        name = "Annotated" if origin is typing.Annotated else getattr(origin, "__qualname__", repr(origin))
        return f"{name}[{', '.join(_spell(arg) for arg in args)}]"
    if isinstance(tp, type):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")


def _name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)


# -- structuring arguments ------------------------------------------------------------------


def _strict(kind: type, json_name: str) -> Callable[[Any, type], Any]:
    def structure(value: Any, _: type) -> Any:
        if kind is float and type(value) is int:
            return float(value)
        if kind is int and type(value) is float and value.is_integer():
            return int(value)  # 3.0 is an integer to JSON Schema too
        if type(value) is not kind:
            raise ValueError(f"expected {json_name}, got {json.dumps(value)[:40]}")
        return value

    return structure


def _converter() -> cattrs.Converter:
    """A converter for the user's types: strict primitives, no unknown keys."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string")):
        converter.register_structure_hook(kind, _strict(kind, name))
    return converter


_CONVERTER = _converter()


def _describe(exc: BaseException, tp: type | None) -> str:
    if isinstance(exc, ValueError) and str(exc).startswith("expected "):
        return str(exc)  # our strict primitives say what they expected
    if isinstance(exc, KeyError):
        return "required field missing"
    return format_exception(exc, tp)


def _problems(exc: Exception, where: str) -> list[str]:
    """Readable one-line problems of a failed structure, located from the argument's name."""
    found = []
    for line in cattrs.transform_error(exc, path=where, format_exception=_describe):
        problem, _, path = line.rpartition(" @ ")
        found.append(f"{path.removeprefix('$.')}: {problem}" if problem else line)
    return found


# -- the handler --------------------------------------------------------------------------------


#: the parameter names of the classic forms, after ``ctx``: a handler whose parameters
#: are exactly these takes the whole arguments dict (the URI and the variables)
CLASSIC_FORMS: dict[int, tuple[str, ...]] = {2: ("arguments",), 3: ("uri", "variables")}

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def is_typed_handler(
    fn: Callable[..., Any], positional: int = 2, *, context: type | None = None, what: str | None = None
) -> bool:
    """Whether ``fn`` is a typed handler rather than the classic ``(ctx, arguments)``
    (with ``positional=3``: ``(ctx, uri, variables)``).

    The classic form is recognised by its parameter names: exactly ``arguments``
    after ``ctx`` (``uri, variables`` for a resource template), or ``*args``.
    Any other parameters after ``ctx`` are typed, whether keyword-only
    (``(ctx, *, query: str)``) or not (``(ctx, query: str)``, the habit of the
    official SDK): each is one argument of the tool, with its schema derived
    from its annotation. A typed tool with an argument named ``arguments``
    makes it keyword-only: ``(ctx, *, arguments: str)``.

    TypeError, at registration, for a function that fits neither form: no
    ``ctx`` first (with ``context``, a first parameter annotated with another
    type), positional-only or ``**kwargs`` parameters, or an ``arguments``
    parameter annotated with something that is not a dict; ``what`` names the handler in
    it (``"tool 'search'"``; by default the function's name).
    """
    name = what or repr(getattr(fn, "__name__", None) or type(fn).__name__)
    classic = CLASSIC_FORMS[positional]
    shapes = f"({', '.join(('ctx', *classic))}) or (ctx, name: type, ...)"
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].kind not in _POSITIONAL:
        raise TypeError(f"{name}: the first parameter receives the request context: a handler is {shapes}")
    if context is not None:
        _check_context(fn, name, params[0], context, shapes)
    rest = params[1:]
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in rest):
        try:
            inspect.signature(fn).bind(*[None] * positional)
        except TypeError:
            raise TypeError(f"{name}: a handler is {shapes}") from None
        return False
    if tuple(p.name for p in rest) == classic and all(p.kind in _POSITIONAL for p in rest):
        if positional == 2:
            _check_arguments_dict(fn, name, rest[0])
        return False
    for p in rest:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(
                f"{name}: **{p.name} has no schema: name each argument as a parameter, or take them "
                f"all as a dict with the form {shapes.partition(' or ')[0]}"
            )
        if p.kind not in _NAMED:
            raise TypeError(f"{name}: parameter {p.name!r} is positional-only, but arguments are passed by name")
    return True


def _check_context(fn: Callable[..., Any], name: str, first: inspect.Parameter, context: type, shapes: str) -> None:
    """A first parameter annotated with another type is an argument, not the context (the
    official SDK's ``async def search(query: str)``): refused, naming where ``ctx`` goes."""
    hint = _hint(fn, first.name)
    if get_origin(hint) is typing.Annotated:
        hint = get_args(hint)[0]
    if hint is None or hint is _UNKNOWN or hint is Any or hint is object:
        return
    if isinstance(hint, type) and (issubclass(hint, context) or issubclass(context, hint)):
        return
    raise TypeError(
        f"{name}: the first parameter receives the request context, but {first.name!r} is annotated "
        f"{_name(hint)}: write ({'ctx: ' + context.__name__}, {first.name}: {_name(hint)}, ...); a handler is {shapes}"
    )


def _check_arguments_dict(fn: Callable[..., Any], name: str, param: inspect.Parameter) -> None:
    hint = _hint(fn, param.name)
    if hint is None or hint is _UNKNOWN or hint is Any or hint is object:
        return
    base = get_origin(hint) or hint
    if isinstance(base, type) and issubclass(base, Mapping):
        return
    raise TypeError(
        f"{name}: a parameter named 'arguments' receives the dict of all arguments (the form (ctx, arguments)), "
        f"but it is annotated {_name(hint)}: for a typed tool with an argument named 'arguments', "
        "make it keyword-only: (ctx, *, arguments: ...)"
    )


_UNKNOWN: Any = object()


def _hint(fn: Callable[..., Any], name: str) -> Any:
    """The resolved annotation of parameter ``name`` (``"return"``: the result), None when
    there is none, or _UNKNOWN when it cannot be resolved (a name imported only for type
    checking): the checks that need it are skipped then, never the registration."""
    target = fn if inspect.isroutine(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True).get(name)
    except Exception:
        pass
    raw = inspect.get_annotations(target).get(name)
    if not isinstance(raw, str):
        return raw
    try:
        return eval(raw, getattr(target, "__globals__", {}))
    except Exception:
        return _UNKNOWN


@attrs.frozen(repr=False, eq=False)
class _Parameter:
    name: str
    annotation: Any
    required: bool


class TypedTool:
    """The ``(ctx, arguments)`` handler the registry calls, around a typed one.

    ``input_schema`` and ``output_schema`` are what the annotations say (None
    where they say nothing: an unannotated parameter when ``input_schema``
    is given explicitly, a return type that is not an attrs class or TypedDict).
    """

    def __init__(self, fn: Callable[..., Awaitable[Any]], name: str, *, schema_given: bool = False) -> None:
        self.fn = fn
        self.name = name
        hints = typing.get_type_hints(fn if inspect.isroutine(fn) else type(fn).__call__, include_extras=True)
        params = list(inspect.signature(fn).parameters.values())[1:]
        missing = [p.name for p in params if p.name not in hints]
        if missing and not schema_given:
            raise TypeError(
                f"tool {name!r}: parameters {missing} have no annotation to derive the input schema from "
                "(annotate them, or give input_schema=)"
            )
        self.parameters = [
            _Parameter(p.name, hints.get(p.name, Any), p.default is inspect.Parameter.empty) for p in params
        ]
        properties: dict[str, Any] = {}
        for p in params:
            try:
                schema = json_schema(hints.get(p.name, Any))
            except TypeError as e:
                raise TypeError(f"tool {name!r}: parameter {p.name!r}: {e}") from None
            properties[p.name] = schema if p.default is p.empty else _with_default(schema, p.default)
        self.input_schema = _object(properties, [p.name for p in self.parameters if p.required])
        #: the return annotation, when results are structured content (an attrs class,
        #: dataclass or TypedDict); TypeError for one a tool cannot return (result_type)
        self.returns = result_type(fn, "tool", name)
        self.output_schema = structured_schema(self.returns) if self.returns is not None else None

    async def __call__(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        kwargs: dict[str, Any] = {}
        problems = [f"{key}: unexpected argument" for key in arguments if key not in self._names()]
        for param in self.parameters:
            if param.name not in arguments:
                if param.required:
                    problems.append(f"{param.name}: required argument missing")
                continue
            try:
                kwargs[param.name] = _CONVERTER.structure(arguments[param.name], param.annotation)
            except Exception as exc:  # cattrs raises ValueError, TypeError and their groups
                problems.extend(_problems(exc, f"$.{param.name}"))
        if problems:
            # [server/tools#20] arguments that do not fit: an execution error the model can correct
            raise ToolError(f"Invalid arguments for tool {self.name!r}: " + "; ".join(problems))
        result = await self.fn(ctx, **kwargs)
        return structured_value(self.returns, result) if self.returns is not None else result

    def _names(self) -> set[str]:
        return {p.name for p in self.parameters}


class StructuredResults:
    """The classic ``(ctx, arguments)`` tool whose return annotation is a structured class:
    what it returns is sent as structured content, as a typed tool's is."""

    def __init__(self, fn: Callable[..., Awaitable[Any]], returns: Any) -> None:
        self.fn = fn
        self.returns = returns

    async def __call__(self, ctx: Any, arguments: dict[str, Any]) -> Any:
        return structured_value(self.returns, await self.fn(ctx, arguments))


def _is_structured(tp: Any) -> bool:
    """An attrs class, a dataclass or a TypedDict of the application's (not one of the data
    model's, such as CallToolResult): its instances are structured content."""
    if typing.is_typeddict(tp):
        return True
    if not isinstance(tp, type) or tp.__module__.startswith(model.__name__):
        return False
    return attrs.has(tp) or dataclasses.is_dataclass(tp)


#: the sequences a tool may return as one JSON array (they unstructure to a list)
_ARRAYS = (list, Sequence, typing.Sequence, collections.abc.Sequence)


def _is_json_value(tp: Any) -> bool:
    """A plain JSON value other than text or an object: a number, a boolean, an enumerated
    value, or a list of JSON values (``list[str]``, ``list[Reading]``; not a list of content
    blocks, nor a bare ``list``, which are content). A tool's result of this kind is structured
    content wrapped as ``{"result": value}`` (:func:`structured_schema`)."""
    if tp in (int, float, bool) or get_origin(tp) is Literal:
        return True
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return True
    if get_origin(tp) not in _ARRAYS or not get_args(tp):
        return False
    blocks = _returns("tool")[1]
    items = _members(get_args(tp)[0])
    return not any(m is Any or m is object or (isinstance(m, type) and issubclass(m, blocks)) for m in items)


def structured_schema(returns: Any) -> dict[str, Any]:
    """The ``outputSchema`` of a tool whose results are ``returns`` (see :func:`result_type`).

    A structured class is the object itself; a plain JSON value (``-> list[str]``, ``-> int``)
    is wrapped, ``{"result": value}``: an object in every revision, as 2025-11-25 and older
    require of structured content and an output schema, so that one tool reads the same in
    every revision (2026-07-28 would allow the bare value; see spec_notes/server/tools.md).
    """
    schema = json_schema(returns)
    return schema if _is_structured(returns) else _object({"result": schema}, ["result"])


def structured_value(returns: Any, value: Any) -> Any:
    """What a tool returned as ``returns``, as its structured content (a CallToolResult as it is)."""
    if isinstance(value, CallToolResult):
        return value
    content = _CONVERTER.unstructure(value, unstructure_as=returns)
    return content if _is_structured(returns) else {"result": content}


# -- what a handler may return, checked at registration --------------------------------------


@functools.cache
def _returns(kind: str) -> tuple[tuple[type, ...], tuple[type, ...], bool, str]:
    """Per kind of handler: the classes a result may be, the classes of a list's items,
    whether a dict is taken (a tool's structured content), and what the error message
    lists. (Made on first use: a tools-only server never loads the resources and
    prompts chapters of the data model.)"""
    if kind == "tool":
        blocks = (model.TextContent, model.ImageContent, model.AudioContent, model.ResourceLink, model.EmbeddedResource)
        allowed = (
            "str, a dict, a list of content blocks, a CallToolResult, an attrs class, dataclass or TypedDict, "
            'or a number, boolean or list of JSON values (structured content, as {"result": ...}), '
            "with its output schema"
        )
        return (str, CallToolResult), blocks, True, allowed
    if kind == "resource":
        contents = (str, bytes, bytearray, model.TextResourceContents, model.BlobResourceContents)
        return contents, contents, False, "str, bytes, TextResourceContents, BlobResourceContents or a list of them"
    allowed = "str, a list of PromptMessage or a GetPromptResult"
    return (str, model.GetPromptResult), (model.PromptMessage,), False, allowed


def result_type(fn: Callable[..., Any], kind: Literal["tool", "resource", "prompt"], name: str) -> Any:
    """The structured result class of a tool from its return annotation (None: results
    are not structured; always None for a resource or prompt).

    TypeError, at registration, for a return annotation the handler's result could
    never be sent as (``-> None``, ``-> set[str]``, a pydantic model): its every call would
    fail. An unannotated return is not checked.
    """
    hint = _hint(fn, "return")
    if hint is None or hint is _UNKNOWN:
        return None
    leaves, items, mapping, allowed = _returns(kind)
    members = _members(hint)
    structured = [m for m in members if kind == "tool" and (_is_structured(m) or _is_json_value(m))]
    bad = [m for m in members if m not in structured and not _returnable(m, leaves, items, mapping)]
    if bad or len(structured) > 1 or (structured and any(m not in (*structured, CallToolResult) for m in members)):
        if bad:
            what = f"returns {_spell(bad[0])}" + (f" (in {_spell(hint)})" if bad[0] is not hint else "")
        else:
            what = f"-> {_spell(hint)} mixes structured content with other results"
        raise TypeError(f"{kind} {name!r} {what}, which is never sent: a {kind} returns {allowed}")
    if structured:
        try:
            json_schema(structured[0])  # TypeError now for a field with no JSON form
        except TypeError as e:
            raise TypeError(f"{kind} {name!r}: return type {_spell(structured[0])}: {e}") from None
        return structured[0]
    return None


def _members(hint: Any) -> list[Any]:
    if get_origin(hint) is typing.Annotated:
        return _members(get_args(hint)[0])
    if get_origin(hint) in (Union, types.UnionType):
        return [m for arg in get_args(hint) for m in _members(arg)]
    return [hint]


def _returnable(tp: Any, leaves: tuple[type, ...], items: tuple[type, ...], mapping: bool) -> bool:
    if tp is Any or tp is object:
        return True
    origin = get_origin(tp)
    if origin is None and isinstance(tp, type):
        return issubclass(tp, leaves) or (mapping and issubclass(tp, dict)) or tp in (list, Sequence)
    if origin in (list, Sequence, typing.Sequence, collections.abc.Sequence):
        args = get_args(tp)
        return not args or all(m is Any or (isinstance(m, type) and issubclass(m, items)) for m in _members(args[0]))
    if mapping and origin in (dict, Mapping, collections.abc.Mapping):
        return True
    return False


# -- prompts and resource templates: strings only ---------------------------------------------


def _string_parameters(fn: Callable[..., Any], what: str) -> list[tuple[inspect.Parameter, str | None]]:
    """The keyword parameters of a typed prompt or template handler, with their descriptions."""
    hints = typing.get_type_hints(fn if inspect.isroutine(fn) else type(fn).__call__, include_extras=True)
    found = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        hint = hints.get(p.name, str)
        notes: list[str] = []
        if get_origin(hint) is typing.Annotated:
            notes = [m for m in get_args(hint)[1:] if isinstance(m, str)]
            hint = get_args(hint)[0]
        if hint not in (str, str | None, typing.Optional[str]):  # noqa: UP045 (both spellings)
            raise TypeError(f"{what}: parameter {p.name!r} is {_name(hint)}, but these values are strings on the wire")
        found.append((p, " ".join(notes) or None))
    return found


class TypedPrompt:
    """The ``(ctx, arguments)`` prompt function around ``async def fn(ctx, *, name: str, ...)``.

    ``arguments`` are the prompt arguments it declares (server/prompts#listing-prompts).
    """

    def __init__(self, fn: Callable[..., Awaitable[Any]], name: str) -> None:
        self.fn = fn
        self.arguments = [
            model.PromptArgument(name=p.name, description=note, required=p.default is inspect.Parameter.empty)
            for p, note in _string_parameters(fn, f"prompt {name!r}")
        ]

    async def __call__(self, ctx: Any, arguments: dict[str, str]) -> Any:
        # the registry has checked them against the declared arguments (prompts#6, #7)
        return await self.fn(ctx, **arguments)


class TypedTemplate:
    """The ``(ctx, uri, variables)`` reader around ``async def fn(ctx, *, variable: str, ...)``.

    Its parameters are the template's variables, no more and no fewer.
    """

    def __init__(self, fn: Callable[..., Awaitable[Any]], uri_template: str, variables: Sequence[str]) -> None:
        self.fn = fn
        names = [p.name for p, _ in _string_parameters(fn, f"resource template {uri_template!r}")]
        if sorted(names) != sorted(variables):
            raise TypeError(
                f"resource template {uri_template!r} has the variables {sorted(variables)}, "
                f"but {getattr(fn, '__name__', 'its handler')!r} takes {sorted(names)}"
            )

    async def __call__(self, ctx: Any, uri: str, variables: dict[str, str]) -> Any:
        return await self.fn(ctx, **variables)


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
