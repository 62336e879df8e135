"""The one cattrs converter: JSON values <-> attrs classes.

One converter *definition* (:func:`_build`), instantiated once per protocol
revision: structuring is identical in all of them (decoding is tolerant of
fields of other revisions), unstructuring for a revision leaves out the fields
that revision lacks (newer ones, and ones it removed) and refuses classes it
does not have (LocalProtocolError, before anything reaches the wire). See
``spec_notes/schema.md``.

Structuring is strict: no coercion (``"1"`` is not an integer, ``true`` is
not a number, ``1.0`` is not a request id; the one leniency: a plain integer
field takes an integral float such as ``100.0``), and every failure is a
:class:`DecodeError` whose path names the wire keys, e.g.
``params.arguments: expected object``.

Speed: the engine decodes every message here. Each class gets generated
straight-line code on first use (:func:`_generate_fast_path`); tagged unions
map the tag straight to the member's decoder; hooks are cached per type. The
careful, field-by-field path runs only when the fast one meets something
unexpected, to name the problem.
"""

import functools
import importlib
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.fns import identity
from cattrs.gen import make_dict_unstructure_fn, override

from ..errors import DecodeError, ErrorCode, LocalProtocolError
from ._base import (
    DISCRIMINATOR_KEYS,
    LATEST_LEGACY_REVISION,
    LATEST_PROTOCOL_VERSION,
    LAZY_TYPES,
    REVISIONS,
    UNION_DISCRIMINATORS,
    FieldValueError,
    Narrowed,
    exists_in,
    fields_until_of,
    install_model_methods,
    is_modern,
    since_of,
    until_of,
    wire_name,
)
from ._meta_keys import WELL_FORMED, bad_meta_keys

__all__ = [
    "converter_for",
    "encode",
    "decode",
    "field_writer",
    "wire_fields",
    "WireField",
    "conforms",
    "lazy_target",
]

T = TypeVar("T")
_NoneType = type(None)


@attrs.frozen(repr=False, eq=False)
class WireField:
    """How one attrs field appears on the wire."""

    name: str
    wire: str
    type: Any
    #: decoding needs it: required on the wire in every revision the field is part
    #: of, and part of every revision its class is (a field some revision removed
    #: is taken absent, so that a peer of that revision decodes)
    required: bool
    since: str
    extra: bool  # the catch-all of an open type
    #: ((revision the type changed in, the type before it), ...), oldest change first
    older: tuple[tuple[str, Any], ...] = ()
    #: JSON null is a value of the field (not just "absent"): a required field
    #: whose type includes None (``Task.ttl``), or one marked NULLABLE
    nullable: bool = False
    #: a value here changes what the message means (see ``MEANINGFUL``): an
    #: older revision without the field refuses the value instead of dropping it
    meaningful: bool = False
    #: the revision that removed the field (None: not removed)
    until: str | None = None
    #: from this revision on the field is required on the wire though it has a
    #: default (see ``required_from``); None: ``required`` says it all
    required_from: str | None = None
    #: required on the wire where the field exists (by its type and default: no
    #: default, or a constant); ``required`` minus the tolerance for removed fields
    wire_required: bool = False
    #: decodes the field's JSON value in place of its type's hook (see ``READ``):
    #: ``read(value, type)`` returns the value to keep
    read: Callable[[Any, Any], Any] | None = None

    def exists_in(self, revision: str) -> bool:
        """Whether the field is part of ``revision`` (not newer, not removed)."""
        return self.since <= revision and (self.until is None or revision < self.until)

    def type_in(self, revision: str) -> Any:
        """The field's type in ``revision`` (see :func:`older_type`)."""
        for changed_in, tp in self.older:
            if revision < changed_in:
                return tp
        return self.type

    def required_in(self, revision: str) -> bool:
        """Whether the field is required on the wire in ``revision``."""
        if self.extra:
            return False
        if self.required_from is not None and revision >= self.required_from:
            return True
        tp = self.type_in(revision)
        if tp is self.type:
            return self.wire_required
        if isinstance(tp, Narrowed):
            tp = tp.base
        return _NoneType not in (get_args(tp) if _is_union(tp) else (tp,))


def _is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


@functools.cache
def wire_fields(cls: type) -> tuple[WireField, ...]:
    """The wire layout of an attrs class of the data model."""
    attrs.resolve_types(cls)
    out = []
    cls_since = since_of(cls)
    lost = fields_until_of(cls)
    for f in attrs.fields(cls):
        md = f.metadata or {}
        removed = [r for r in (md.get("until"), lost.get(f.name)) if r is not None]
        # A field is required on the wire when it has no default, or when it
        # is a constant / discriminator (a non-optional Literal with a default,
        # such as ``jsonrpc``, ``method`` or a content block's ``type``).
        required = f.default is attrs.NOTHING or (_is_literal(f.type) and f.default is not None)
        required = required and not md.get("extra", False)
        out.append(
            WireField(
                name=f.name,
                wire=wire_name(f.name, md),
                type=f.type,
                required=required and not removed,
                wire_required=required,
                since=max(cls_since, md.get("since", cls_since)),
                extra=bool(md.get("extra", False)),
                older=tuple(sorted(md.get("older", ()), key=lambda c: str(c[0]))),
                nullable=bool(md.get("nullable")) or (f.default is attrs.NOTHING and _admits_none(f.type)),
                meaningful=bool(md.get("meaningful")),
                until=min(removed) if removed else None,
                required_from=md.get("required"),
                read=md.get("read"),
            )
        )
    return tuple(out)


def _admits_none(tp: Any) -> bool:
    return tp is Any or tp is _NoneType or (_is_union(tp) and _NoneType in get_args(tp))


def _without_none(tp: Any) -> Any:
    """``X | None`` -> ``X``: the type an optional, non-nullable field decodes with."""
    if not _is_union(tp):
        return tp
    args = tuple(a for a in get_args(tp) if a is not _NoneType)
    if len(args) == len(get_args(tp)):
        return tp
    return args[0] if len(args) == 1 else Union[args]  # noqa: UP007


# -- structuring ---------------------------------------------------------------

_JSON_TYPE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    dict: "object",
    list: "array",
    _NoneType: "null",
}


def _describe(tp: Any) -> str:
    if tp in _JSON_TYPE_NAMES:
        return _JSON_TYPE_NAMES[tp]
    if _is_literal(tp):
        return "one of " + ", ".join(repr(v) for v in get_args(tp))
    origin = get_origin(tp)
    if origin in _JSON_TYPE_NAMES:
        return _JSON_TYPE_NAMES[origin]
    if origin in (Mapping, typing.Mapping):
        return "object"
    if attrs.has(tp):
        return "object"
    if _is_union(tp):
        return " or ".join(dict.fromkeys(_describe(a) for a in get_args(tp)))
    return getattr(tp, "__name__", repr(tp))


def _fail(expected: Any) -> DecodeError:
    return DecodeError("", f"expected {expected if isinstance(expected, str) else _describe(expected)}")


def _structure_str(value: Any, _: Any) -> str:
    if type(value) is not str:
        raise _fail(str)
    return value


def _structure_int(value: Any, _: Any) -> int:
    if type(value) is not int:
        # JSON has one number type; 3.0 is accepted as the integer 3 only when
        # a peer's encoder wrote it so. Never coerce strings or booleans.
        if type(value) is float and value.is_integer():
            return int(value)
        raise _fail(int)
    return value


def _structure_float(value: Any, _: Any) -> float:
    if type(value) is int or type(value) is float:
        return value  # kept as given, so it re-encodes to the same JSON
    raise _fail(float)


def _structure_bool(value: Any, _: Any) -> bool:
    if type(value) is not bool:
        raise _fail(bool)
    return value


def _structure_any(value: Any, _: Any) -> Any:
    return value


def _prefix(err: DecodeError, segment: str | int) -> DecodeError:
    # an empty object key would vanish from a dotted path: it is written [""]
    seg = f"[{segment}]" if isinstance(segment, int) else segment or '[""]'
    if not err.path:
        path = seg
    elif err.path.startswith("["):
        path = seg + err.path
    else:
        path = f"{seg}.{err.path}"
    new = DecodeError(path, err.problem, err.code)
    new.__cause__ = err.__cause__
    return new


class _Factories:
    """Hook factories bound to one converter."""

    def __init__(self, conv: cattrs.Converter, revision: str, *, engine_completes: bool = False) -> None:
        self.conv = conv
        self.revision = revision
        self.engine_completes = engine_completes
        self._hooks: dict[Any, Callable[[Any, Any], Any]] = {}
        self._by_class: dict[type, Callable[[Any], Any]] = {}

    # ---- structure
    def literal(self, tp: Any) -> Callable[[Any, Any], Any]:
        allowed = get_args(tp)
        expected = _describe(tp)

        def structure(value: Any, _: Any) -> Any:
            # bool is an int in Python: compare types as well as values
            for a in allowed:
                if value == a and type(value) is type(a):
                    return a
            raise _fail(expected)

        return structure

    def hook(self, tp: Any) -> Callable[[Any, Any], Any]:
        """The structure hook of ``tp``, cached (cheaper than cattrs' dispatch);
        for a class, its generated fast path rather than the first-call stub."""
        found = self._hooks.get(tp)
        if found is None:
            found = self.conv.get_structure_hook(tp)
            prepare = getattr(found, "prepare", None)
            if prepare is not None:
                found = prepare()
            self._hooks[tp] = found
        return found

    def list_(self, tp: Any) -> Callable[[Any, Any], Any]:
        args = get_args(tp)
        item = args[0] if args else Any
        if item is Any:

            def structure_any_list(value: Any, _: Any) -> Any:
                if type(value) is not list:
                    raise _fail(list)
                return value

            return structure_any_list
        hook_for = self.hook
        found: list[Callable[[Any, Any], Any]] = []

        def structure(value: Any, _: Any) -> Any:
            if type(value) is not list:
                raise _fail(list)
            hook = found[0] if found else _remember(found, hook_for(item))
            try:
                return [hook(v, item) for v in value]
            except DecodeError:
                for i, v in enumerate(value):  # again, to name the index
                    try:
                        hook(v, item)
                    except DecodeError as e:
                        raise _prefix(e, i) from None
                raise

        return structure

    def dict_(self, tp: Any) -> Callable[[Any, Any], Any]:
        args = get_args(tp)
        val = args[1] if len(args) == 2 else Any
        if val is Any or val is object:

            def structure_any_dict(value: Any, _: Any) -> Any:
                if type(value) is not dict:
                    raise _fail(dict)
                return value

            return structure_any_dict
        hook_for = self.hook
        found: list[Callable[[Any, Any], Any]] = []

        def structure(value: Any, _: Any) -> Any:
            if type(value) is not dict:
                raise _fail(dict)
            hook = found[0] if found else _remember(found, hook_for(val))
            try:
                return {k: hook(v, val) for k, v in value.items()}
            except DecodeError:
                for k, v in value.items():  # again, to name the key
                    try:
                        hook(v, val)
                    except DecodeError as e:
                        raise _prefix(e, k) from None
                raise

        return structure

    def union(self, tp: Any) -> Callable[[Any, Any], Any]:
        members = get_args(tp)
        optional = _NoneType in members
        members = tuple(m for m in members if m is not _NoneType)
        hook_for = self.hook
        expected = _describe(tp)
        if len(members) == 1:
            only = members[0]

            def structure_optional(value: Any, _: Any) -> Any:
                if value is None:
                    return None
                try:
                    return hook_for(only)(value, only)
                except DecodeError as e:
                    if e.path:
                        raise
                    raise _fail(expected) from None  # "expected integer or null"

            return structure_optional
        scalars = _scalar_union(tp)
        if scalars is not None:
            # str | int (ids, progress tokens) and the like: exact JSON types

            def structure_scalars(value: Any, _: Any) -> Any:
                if type(value) in scalars:
                    return value
                raise _fail(expected)

            return structure_scalars
        classes = tuple(m for m in members if attrs.has(m))
        others = tuple(m for m in members if not attrs.has(m))
        # JSON types a scalar member takes as they are (bool is not a number)
        exact = {t for m in others if m in (str, int, float, bool) for t in ((int, float) if m is float else (m,))}
        containers = tuple(m for m in others if m not in (str, int, float, bool))
        lists = tuple(m for m in containers if _is_list(m))
        dicts = tuple(m for m in containers if _is_dict(m))
        key: str | None = DISCRIMINATOR_KEYS.get(tp)
        chooser = UNION_DISCRIMINATORS.get(tp)
        by_tag: dict[str, Callable[[Any, Any], Any]] = {}  # tag -> member hook, filled on use
        tag_key: str | None = None  # set when the members are told apart by a literal tag
        if chooser is None and len(classes) > 1:
            found = _literal_discriminator(classes)
            if found is not None:
                key, chooser = found
                tag_key = key
        tags = sorted(
            {repr(v) for m in classes for f in wire_fields(m) if f.wire == key for v in _literal_values(f.type)}
        )

        def structure(value: Any, _: Any) -> Any:
            if by_tag and type(value) is dict:
                # the common case: a known tag ("type": "text", "method": ...)
                tag = value.get(tag_key)
                if type(tag) is str:
                    hook = by_tag.get(tag)
                    if hook is not None:
                        return hook(value, None)
            if value is None:
                if optional:
                    return None
                raise _fail(expected)
            if type(value) is dict and classes:
                if chooser is not None:
                    cls = chooser(value)
                    if cls is not None:
                        hook = hook_for(cls)
                        if tag_key is not None and type(value.get(tag_key)) is str:
                            by_tag[value[tag_key]] = hook
                        return hook(value, cls)
                    if key is not None:
                        if key not in value:
                            raise DecodeError(key, "required field missing")
                        raise DecodeError(key, f"expected one of {', '.join(tags)}")
                    raise _fail(f"one of the {_union_name(tp)} variants")
                # No tag: the first member that decodes wins, the most
                # demanding (most required keys) first.
                first_err: DecodeError | None = None
                for m in _by_demand(classes):
                    try:
                        return hook_for(m)(value, m)
                    except DecodeError as e:
                        first_err = first_err or e
                assert first_err is not None
                raise first_err
            # Scalars in a union are matched by their exact JSON type: an id
            # or a progress token of 1.0 is not the integer 1 (ids are echoed
            # verbatim), and a number field keeps 2 and 2.0 apart.
            kind = type(value)
            if kind in exact:
                return value
            # An array or object goes to the one array / object member, whose
            # own error (with its path) is the useful one.
            same_kind = lists if kind is list else dicts if kind is dict else ()
            if len(same_kind) == 1:
                return hook_for(same_kind[0])(value, same_kind[0])
            for m in containers:
                try:
                    return hook_for(m)(value, m)
                except DecodeError:
                    continue
            raise _fail(expected)

        return structure

    def attrs_class(self, cls: type) -> Callable[[Any, Any], Any]:
        fields = wire_fields(cls)
        # (attribute name, wire key, type, required), computed once per class.
        # An optional field may be absent but is not null unless nullable:
        # ``"nextCursor": null`` is refused like any other wrong type.
        plain = [
            (
                f.name,
                f.wire,
                _Reading(f.read) if f.read is not None else f.type if f.nullable else _without_none(f.type),
                f.required,
            )
            for f in fields
            if not f.extra
        ]
        extra_name = next((f.name for f in fields if f.extra), None)
        known = frozenset(f.wire for f in fields if not f.extra)
        # optional fields of the modern era: looked up only when the object has keys left
        # over (a session's message never has them: no per-message cost there, bench W1)
        late = frozenset(f.name for f in fields if not f.extra and not f.required and is_modern(f.since))
        # [basic/index#14] a JSON-RPC notification is told from a request by
        # the absence of an id: one that carries an id is no notification
        no_id = {"jsonrpc", "method"} <= known and "id" not in known
        # Field hooks are looked up on first use, not here: the model has
        # mutually referring types, and a hook made eagerly would recurse.
        hooks: list[Callable[[Any, Any], Any]] = []
        fast: Callable[[Any, Any], Any] | None = None

        def careful(value: Any) -> Any:
            # The slow path: field by field, so a failure names its wire path.
            if no_id and "id" in value:
                raise DecodeError("id", "a notification carries no id")
            kwargs: dict[str, Any] = {}
            for i, (name, wire, tp, required) in enumerate(plain):
                if wire in value:
                    try:
                        kwargs[name] = hooks[i](value[wire], tp)
                    except DecodeError as e:
                        raise _prefix(e, wire) from None
                elif required:
                    raise DecodeError(wire, "required field missing")
            if extra_name is not None and len(value) > len(kwargs):
                # [basic/index#9] an open result (or params) keeps the keys it does not know -- index#result-responses
                kwargs[extra_name] = {k: v for k, v in value.items() if k not in known}
            try:
                return cls(**kwargs)
            except FieldValueError as e:  # a validator of the class refused
                raise DecodeError(e.path, e.problem) from None
            except (TypeError, ValueError) as e:  # any other validator
                raise DecodeError("", str(e)) from e

        preparing = False

        def prepare() -> Callable[[Any, Any], Any]:
            # Generate the fast path once the field types' hooks can be had
            # (on first use). A class reached again while its own fields are
            # being prepared (a recursive type) keeps this stub.
            nonlocal fast, preparing
            if fast is None:
                if preparing:
                    return structure
                preparing = True
                try:
                    resolved = [tp.read if isinstance(tp, _Reading) else self.hook(tp) for _, _, tp, _ in plain]
                finally:
                    preparing = False
                hooks[:] = resolved
                fast = _generate_fast_path(cls, plain, hooks, extra_name, known, careful, no_id, late)
            return fast

        def structure(value: Any, _: Any) -> Any:
            return (fast or prepare())(value, _)

        structure.prepare = prepare  # type: ignore[attr-defined]
        return structure

    # ---- unstructure
    def attrs_unstructure(self, cls: type) -> Callable[[Any], Any]:
        revision = self.revision
        if not exists_in(cls, revision):
            name = cls.__name__
            removed = until_of(cls)
            if removed is None or revision < removed:
                problem = f"{name} does not exist in protocol revision {revision}"
            elif revision == removed:
                problem = f"{name} was removed in protocol revision {revision}"
            else:
                problem = f"{name} does not exist in protocol revision {revision} (removed in {removed})"

            def refuse(obj: Any) -> Any:
                raise LocalProtocolError(problem, ErrorCode.INVALID_REQUEST)

            return refuse
        overrides: dict[str, Any] = {}
        extra_name = None
        checks: list[tuple[str, Any]] = []
        refused: list[tuple[str, str]] = []
        needed: list[tuple[str, str]] = []
        for f in wire_fields(cls):
            if f.extra:
                extra_name = f.name
                overrides[f.name] = override(omit=True)
            elif not f.exists_in(revision):
                # newer than the revision, or removed by it: never written
                overrides[f.name] = override(omit=True)
                if f.meaningful:
                    refused.append((f.name, f.wire))
            else:
                attribute = attrs.fields_dict(cls)[f.name]
                optional = attribute.default is None
                key_check = attribute.metadata.get("key_check")
                if f.wire == "_meta":
                    writer: Callable[[Any], Any] | None = _meta_writer(cls.__name__)
                elif key_check is not None:
                    writer = _keys_writer(f"{cls.__name__}.{f.wire}", key_check)
                else:
                    writer = None
                # a member the revision requires is never left out (None is refused, below), so it
                # is written in its place among the fields (an omittable one comes after them all)
                required_here = f.required_from is not None and revision >= f.required_from
                if self.engine_completes:
                    # the engine writes these members itself (a request's _meta, a
                    # result's caching hints): left out when None, never refused
                    required_here = False
                overrides[f.name] = override(
                    rename=f.wire, omit_if_default=optional and not required_here, unstruct_hook=writer
                )
                old = f.type_in(revision)
                if old is not f.type:
                    if optional and _admits_none(old.base if isinstance(old, Narrowed) else old):
                        # checked as the field is written: nothing to do when it is absent
                        # (a 2025 tool result without structured content costs nothing)
                        overrides[f.name] = override(
                            rename=f.wire,
                            omit_if_default=True,
                            unstruct_hook=_checking_field(
                                self.conv.get_unstructure_hook(f.type), cls.__name__, f.name, revision, old
                            ),
                        )
                    else:
                        checks.append((f.name, old))
                if optional and required_here:
                    needed.append((f.name, f.wire))
        fn: Callable[[Any], Any] = make_dict_unstructure_fn(cls, self.conv, **overrides)
        if extra_name is not None:
            fn = _merging_extra(fn, extra_name)
        if checks:
            fn = _checking_older_types(fn, cls.__name__, revision, checks)
        if refused:
            fn = _refusing_newer_fields(fn, cls.__name__, revision, refused)
        if needed:
            fn = _refusing_missing_fields(fn, cls.__name__, revision, needed)
        if cls.__subclasses__():
            # A field typed with a base class (``result: Result``) may hold a
            # subclass instance: encode what is there, not what is declared.
            fn = self._by_runtime_class(cls, fn)
        return fn

    def _by_runtime_class(self, cls: type, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        by_class = self.by_class

        def dispatch(obj: Any) -> Any:
            if obj.__class__ is cls:
                return fn(obj)
            return by_class(obj)

        return dispatch

    def by_class(self, obj: Any) -> Any:
        """Unstructure ``obj`` by its own class, as ``conv.unstructure(obj)`` does, with
        the class's hook kept here rather than found through cattrs' dispatch each time
        (a union member, a subclass in a base-class field: every result, every content block)."""
        hooks = self._by_class
        fn = hooks.get(obj.__class__)
        if fn is None:
            fn = hooks[obj.__class__] = self.conv.get_unstructure_hook(obj.__class__)
        return fn(obj)

    def lazy_structure(self, tp: Any) -> Callable[[Any, Any], Any]:
        found: list[Any] = []

        def structure(value: Any, _: Any) -> Any:
            if not found:
                real = lazy_target(tp)
                found.extend((self.hook(real), real))
            return found[0](value, found[1])

        return structure

    def lazy_unstructure(self, tp: Any) -> Callable[[Any], Any]:
        found: list[Callable[[Any], Any]] = []

        def unstructure(value: Any) -> Any:
            if not found:
                found.append(self.conv.get_unstructure_hook(lazy_target(tp)))
            return found[0](value)

        return unstructure

    def union_unstructure(self, tp: Any) -> Callable[[Any], Any]:
        # JSON scalars (ids, progress tokens) and optional JSON values (``dict[str, Any] | None``:
        # tool arguments, structured content) are written as they are
        if _scalar_union(tp) is not None:
            return identity
        members = [a for a in get_args(tp) if a is not _NoneType]
        if len(members) == 1 and not attrs.has(members[0]):
            # ``X | None`` of a container of model objects (InputRequests): X's own hook
            hook = (
                self.lazy_unstructure(members[0])
                if _is_lazy(members[0])
                else self.conv.get_unstructure_hook(members[0])
            )
            if hook is identity:
                return identity
            return lambda value: None if value is None else hook(value)
        if not any(attrs.has(a) for a in members) and all(
            self.conv.get_unstructure_hook(a) is identity for a in members
        ):
            return identity
        return self.by_class

    def dict_unstructure(self, tp: Any) -> Callable[[Any], Any]:
        by_class = self.by_class

        def unstructure_dict(value: Any) -> Any:
            return {k: by_class(v) for k, v in value.items()}

        return unstructure_dict

    def list_unstructure(self, tp: Any) -> Callable[[Any], Any]:
        by_class = self.by_class

        def unstructure_list(value: Any) -> Any:
            return [by_class(v) for v in value]

        return unstructure_list


def _merging_extra(fn: Callable[[Any], Any], extra_name: str) -> Callable[[Any], Any]:
    def with_extra(obj: Any) -> Any:
        out = fn(obj)
        extra = getattr(obj, extra_name)
        if extra:
            for k, v in extra.items():
                # [basic/index#9] ... and writes them back out -- index#result-responses
                out.setdefault(k, v)  # a known field always wins over a stray key
        return out

    return with_extra


def _scalar_union(tp: Any) -> frozenset[type] | None:
    """The JSON types a union of str/int/float/bool takes as they are, or None."""
    if not _is_union(tp):
        return None
    members = get_args(tp)
    if not all(m in (str, int, float, bool, _NoneType) for m in members):
        return None
    return frozenset(t for m in members for t in ((int, float) if m is float else (m,)))


class _Reading:
    """The "type" of a field decoded by its own reader (``metadata={"read": fn}``):
    the generated code calls the reader, as it calls a hook, on any value."""

    __slots__ = ("read",)

    def __init__(self, read: Callable[[Any, Any], Any]) -> None:
        self.read = read


class _Slow(Exception):
    """Raised inside a generated fast path: let the careful path decide."""


def _generate_fast_path(
    cls: type,
    plain: list[tuple[str, str, Any, bool]],
    hooks: list[Callable[[Any, Any], Any]],
    extra_name: str | None,
    known: frozenset[str],
    careful: Callable[[Any], Any],
    no_id: bool = False,
    late: frozenset[str] = frozenset(),
) -> Callable[[Any, Any], Any]:
    """Straight-line decoding of one class, generated once (as cattrs and attrs
    do). Scalars and constants are checked inline; anything unexpected goes
    to ``careful``, which finds and reports the exact problem.

    Every field gets a value (an absent optional field its default, None).
    Where the class allows (:func:`_direct_setters`), the instance is made and
    its slots filled directly, and the fields' validators run as its
    ``__init__`` would run them: the same object for half the work of a call
    with keywords (a frozen class's ``__init__`` sets each field through
    ``object.__setattr__``). Otherwise the fields are passed by keyword.
    """
    ns: dict[str, Any] = {
        "cls": cls,
        "careful": careful,
        "SLOW": _Slow(),
        "known": known,
        "not_object": _not_object,
        "ABSENT": _ABSENT,
        "new": object.__new__,
        "validators_disabled": attrs.validators.get_disabled,
    }
    fields = attrs.fields(cls)
    defaults = {a.name: a.default for a in fields}
    setters = _direct_setters(cls)
    body = ["def fast(value, _t=None):", "    if type(value) is not dict:", "        raise not_object()"]
    if no_id:
        body += ['    if "id" in value:', "        return careful(value)"]
    body.append("    try:")
    counting = extra_name is not None or bool(late)
    if counting:
        body.append("        present = 0")
    #: field name -> the generated variable holding its value
    args: dict[str, str] = {}
    # the late fields last, in a block entered only when keys are left over
    order = [e for e in enumerate(plain) if e[1][0] not in late] + [e for e in enumerate(plain) if e[1][0] in late]
    in_late = False
    outer = body
    for i, (name, wire, tp, required) in order:
        if name in late and not in_late:
            in_late = True
            outer = body
            body = []
        ns[f"h{i}"], ns[f"t{i}"] = hooks[i], tp
        v = f"v{i}"
        scalars = _scalar_union(tp)
        if tp is Any or tp is object:
            check = []
        elif tp in (str, bool, int):
            # (an integral float for an int field is left to the careful path)
            check = [f"if type({v}) is not {tp.__name__}: raise SLOW"]
        elif tp is float:
            check = [f"if type({v}) is not float and type({v}) is not int: raise SLOW"]
        elif scalars is not None:
            ns[f"e{i}"] = scalars
            check = [f"if type({v}) not in e{i}: raise SLOW"]
        elif _is_dict(tp) and get_args(tp)[1:] in ((Any,), (object,), ()):
            check = [f"if type({v}) is not dict: raise SLOW"]
        elif _is_literal(tp) and len(get_args(tp)) == 1:
            ns[f"c{i}"] = const = get_args(tp)[0]
            check = [f"if {v} != c{i} or type({v}) is not {type(const).__name__}: raise SLOW", f"{v} = c{i}"]
        else:
            check = [f"{v} = h{i}({v}, t{i})"]
        if required:
            body.append(f"        {v} = value[{wire!r}]")
            body += [f"        {line}" for line in check]
            if counting:
                body.append("        present += 1")
        else:
            ns[f"d{i}"] = defaults[name]
            body += [
                f"        {v} = value.get({wire!r}, ABSENT)",
                f"        if {v} is ABSENT:",
                f"            {v} = d{i}",
            ]
            body.append("        else:")
            body += [f"            {line}" for line in check] or ["            pass"]
            if counting:
                body.append("            present += 1")
        args[name] = v
    if in_late:
        late_body, body = body, outer
        body.append("        if len(value) > present:")
        body += ["    " + line for line in late_body]
        body.append("        else:")
        body += [f"            {args[name]} = d{i}" for i, (name, *_) in order if name in late]
    if extra_name is not None:
        body += [
            "        if len(value) > present:",
            f"            {extra_name}_ = {{k: x for k, x in value.items() if k not in known}}",
            "        else:",
            f"            {extra_name}_ = {{}}",
        ]
        args[extra_name] = f"{extra_name}_"
    if setters is None:
        body.append(f"        return cls({', '.join(f'{k}={v}' for k, v in args.items())})")
    else:
        # the fields in attrs' order, then their validators (as attrs' __init__ does)
        body.append("        o = new(cls)")
        for j, (a, setter) in enumerate(zip(fields, setters, strict=True)):
            ns[f"s{j}"] = setter
            body.append(f"        s{j}(o, {args[a.name]})")
        checked = [(j, a) for j, a in enumerate(fields) if a.validator is not None]
        if checked:
            body.append("        if not validators_disabled():")
            for j, a in checked:
                ns[f"val{j}"], ns[f"a{j}"] = a.validator, a
                body.append(f"            val{j}(o, a{j}, o.{a.name})")
        body.append("        return o")
    body += ["    except Exception:", "        return careful(value)"]
    exec("\n".join(body), ns)  # code built above from the class's own field names only
    fast: Callable[[Any, Any], Any] = ns["fast"]
    return fast


def _direct_setters(cls: type) -> list[Callable[[Any, Any], None]] | None:
    """The slot setters of ``cls``'s fields, in attrs' order, when an instance can be
    made by filling them in (see :func:`_generate_fast_path`); None when its
    ``__init__`` does more than set the fields and run their validators."""
    custom_new = any("__new__" in vars(c) for c in cls.__mro__[:-1])
    if custom_new or hasattr(cls, "__attrs_pre_init__") or hasattr(cls, "__attrs_post_init__"):
        return None
    setters = []
    for a in attrs.fields(cls):
        slot = getattr(cls, a.name, None)
        if a.converter is not None or not a.init or a.alias != a.name or type(slot) is not types.MemberDescriptorType:
            return None
        setters.append(slot.__set__)
    return setters


#: marks an absent key in generated code (None is a JSON value)
_ABSENT = object()


def _not_object() -> DecodeError:
    return _fail(dict)


def _remember(cell: list[Any], value: Any) -> Any:
    cell.append(value)
    return value


def _meta_writer(name: str) -> Callable[[Any], Any]:
    """How a ``_meta`` field is written: [basic/index#26, #27, #29] never with a
    malformed key, at any depth. Checked as the field is written (no extra walk;
    an absent ``_meta`` costs nothing, keys seen before one set lookup).
    Decoding does not check: a peer's malformed key never fails a message."""

    def write(meta: Any) -> Any:
        if not WELL_FORMED.issuperset(meta):
            for problem in bad_meta_keys(meta):
                raise LocalProtocolError(f"{name}.{problem}", ErrorCode.INVALID_PARAMS)
        return meta

    return write


def _keys_writer(where: str, check: Callable[[str], str | None]) -> Callable[[Any], Any]:
    """How a field whose keys follow a grammar (see ``KEY_CHECK`` users) is written:
    never with a malformed key. Decoding does not check."""

    def write(value: Any) -> Any:
        for key in value:
            problem = check(key) if isinstance(key, str) else f"key {key!r} is not a string"
            if problem is not None:
                raise LocalProtocolError(f"{where}: {problem}", ErrorCode.INVALID_PARAMS)
        return value

    return write


def _refusing_newer_fields(
    fn: Callable[[Any], Any], name: str, revision: str, fields: list[tuple[str, str]]
) -> Callable[[Any], Any]:
    """Refuse a set field the revision lacks when leaving it out would change the
    message's meaning (a task-augmented call would become a plain one)."""

    def refusing(obj: Any) -> Any:
        for attr, wire in fields:
            if getattr(obj, attr) is not None:
                # [basic/lifecycle#14] only what the negotiated revision has
                raise LocalProtocolError(
                    f"{name}.{wire} does not exist in protocol revision {revision}", ErrorCode.INVALID_PARAMS
                )
        return fn(obj)

    return refusing


def _refusing_missing_fields(
    fn: Callable[[Any], Any], name: str, revision: str, fields: list[tuple[str, str]]
) -> Callable[[Any], Any]:
    """Refuse ``None`` in a field the revision requires on the wire though the class
    lets it default (decoding a peer of another revision may leave it out)."""

    def refusing(obj: Any) -> Any:
        for attr, wire in fields:
            if getattr(obj, attr) is None:
                raise LocalProtocolError(
                    f"{name}.{wire} is required in protocol revision {revision}", ErrorCode.INVALID_PARAMS
                )
        return fn(obj)

    return refusing


def _checking_field(hook: Callable[[Any], Any], name: str, attr: str, revision: str, tp: Any) -> Callable[[Any], Any]:
    """The unstructure hook of one field whose older type ``tp`` is narrower: refuse
    a value the revision cannot express, as :func:`_checking_older_types` does."""

    def checked(value: Any) -> Any:
        if not conforms(value, tp):
            raise LocalProtocolError(
                f"{name}.{attr}: {_short(value)} cannot be expressed in protocol revision {revision}"
                f" (it takes {_type_names(tp)})",
                ErrorCode.INVALID_REQUEST,
            )
        return hook(value)

    return checked


def _checking_older_types(
    fn: Callable[[Any], Any], name: str, revision: str, checks: list[tuple[str, Any]]
) -> Callable[[Any], Any]:
    """Refuse values an older revision cannot express (a field's type changed)."""

    def checked(obj: Any) -> Any:
        for attr, tp in checks:
            value = getattr(obj, attr)
            if not conforms(value, tp):
                raise LocalProtocolError(
                    f"{name}.{attr}: {_short(value)} cannot be expressed in protocol revision {revision}"
                    f" (it takes {_type_names(tp)})",
                    ErrorCode.INVALID_REQUEST,
                )
        return fn(obj)

    return checked


def _type_names(tp: Any) -> str:
    if isinstance(tp, Narrowed):
        return tp.description
    if _is_union(tp):
        return " or ".join(_type_names(a) for a in get_args(tp))
    if attrs.has(tp):
        return str(tp.__name__)
    if tp is _NoneType:
        return "null"
    return _describe(tp)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def conforms(value: Any, tp: Any) -> bool:
    """Whether a model value (not JSON) fits the type ``tp``; no coercion."""
    if tp is Any or tp is object:
        return True
    if isinstance(tp, Narrowed):
        return conforms(value, tp.base) and tp.check(value)
    if tp is _NoneType or tp is None:
        return value is None
    if _is_union(tp):
        return any(conforms(value, a) for a in get_args(tp))
    if _is_literal(tp):
        return any(value == a and type(value) is type(a) for a in get_args(tp))
    if tp is float:
        return type(value) in (int, float)
    if tp in (str, int, bool):
        return type(value) is tp
    if _is_list(tp):
        args = get_args(tp)
        return type(value) is list and all(conforms(v, args[0] if args else Any) for v in value)
    if _is_dict(tp):
        args = get_args(tp)
        return type(value) is dict and all(conforms(v, args[1] if len(args) == 2 else Any) for v in value.values())
    if isinstance(tp, type):
        return isinstance(value, tp)
    return False


def _literal_discriminator(members: tuple[type, ...]) -> tuple[str, Callable[[Any], type | None]] | None:
    """Find a key whose literal values tell the members apart."""
    candidates: set[str] | None = None
    for m in members:
        keys = {f.wire for f in wire_fields(m) if _literal_values(f.type)}
        candidates = keys if candidates is None else candidates & keys
    for key in sorted(candidates or ()):
        table: dict[Any, type] = {}
        default: type | None = None
        ok = True
        for m in members:
            f = next(f for f in wire_fields(m) if f.wire == key)
            if not f.required:
                if default is not None:
                    ok = False
                default = m
            for v in _literal_values(f.type):
                if v in table:
                    ok = False
                table[v] = m
        if ok:
            return key, _tag_chooser(key, table, default)
    return None


def _tag_chooser(key: str, table: dict[Any, type], default: type | None) -> Callable[[Any], type | None]:
    def choose(value: Any) -> type | None:
        if key not in value:
            return default
        tag = value[key]
        return table.get(tag) if type(tag) is str else None

    return choose


def _union_name(tp: Any) -> str:
    return " | ".join(getattr(a, "__name__", repr(a)) for a in get_args(tp))


def _literal_values(tp: Any) -> tuple[Any, ...]:
    if _is_literal(tp):
        return get_args(tp)
    if _is_union(tp):
        vals: tuple[Any, ...] = ()
        for a in get_args(tp):
            if a is _NoneType:
                continue
            if not _is_literal(a):
                return ()
            vals += get_args(a)
        return vals
    return ()


def _by_demand(members: tuple[Any, ...]) -> list[Any]:
    def demand(m: Any) -> int:
        return -sum(1 for f in wire_fields(m) if f.required) if attrs.has(m) else 0

    return sorted(members, key=demand)


def _is_lazy(tp: Any) -> bool:
    try:
        return tp in LAZY_TYPES
    except TypeError:  # (an unhashable annotation)
        return False


def lazy_target(tp: Any) -> Any:
    """The type a :func:`lazy_type` stand-in stands for (its chapter imported now)."""
    module, attribute = LAZY_TYPES[tp]
    return getattr(importlib.import_module(module), attribute)


def _is_list(tp: Any) -> bool:
    return tp is list or get_origin(tp) is list


def _is_model_list(tp: Any) -> bool:
    """A list of model objects (or of a union holding model classes)."""
    args = get_args(tp) if _is_list(tp) else ()
    if not args:
        return False
    item = args[0]
    return attrs.has(item) or (_is_union(item) and any(attrs.has(a) for a in get_args(item)))


def _is_model_dict(tp: Any) -> bool:
    """A dict of model objects (or of a union holding model classes): InputRequests."""
    args = get_args(tp) if _is_dict(tp) else ()
    if len(args) != 2:
        return False
    item = args[1]
    return attrs.has(item) or (_is_union(item) and any(attrs.has(a) for a in get_args(item)))


def _is_dict(tp: Any) -> bool:
    return tp is dict or get_origin(tp) in (dict, Mapping, typing.Mapping)


def _build(revision: str, engine_completes: bool = False) -> cattrs.Converter:
    conv = cattrs.Converter()
    fac = _Factories(conv, revision, engine_completes=engine_completes)
    conv.register_structure_hook(str, _structure_str)
    conv.register_structure_hook(int, _structure_int)
    conv.register_structure_hook(float, _structure_float)
    conv.register_structure_hook(bool, _structure_bool)
    conv.register_structure_hook_func(lambda t: t is Any or t is object, _structure_any)
    conv.register_structure_hook_factory(_is_literal, fac.literal)
    conv.register_structure_hook_factory(_is_list, fac.list_)
    conv.register_structure_hook_factory(_is_dict, fac.dict_)
    conv.register_structure_hook_factory(_is_union, fac.union)
    conv.register_structure_hook_factory(attrs.has, fac.attrs_class)
    # stand-ins for types of chapters loaded on first use (see ``lazy_type``)
    conv.register_structure_hook_factory(_is_lazy, fac.lazy_structure)
    conv.register_unstructure_hook_factory(_is_lazy, fac.lazy_unstructure)
    # JSON values held as Any / dict[str, Any] / list[Any] are already JSON (cattrs' own
    # identity: the generated code then writes the field's value without a call, bench W1)
    conv.register_unstructure_hook_func(
        lambda t: t is Any or (_is_dict(t) and get_args(t)[1:] in ((Any,), (object,), ())), identity
    )
    conv.register_unstructure_hook_factory(attrs.has, fac.attrs_unstructure)
    # unions and lists of model classes: by the value's class, as cattrs does, minus its dispatch
    conv.register_unstructure_hook_factory(_is_union, fac.union_unstructure)
    conv.register_unstructure_hook_factory(_is_model_list, fac.list_unstructure)
    conv.register_unstructure_hook_factory(_is_model_dict, fac.dict_unstructure)
    if not engine_completes:
        _FACTORIES[revision] = fac
    return conv


_FACTORIES: dict[str, _Factories] = {}


@functools.cache
def converter_for(revision: str = LATEST_PROTOCOL_VERSION, *, engine_completes: bool = False) -> cattrs.Converter:
    """The converter that encodes for ``revision`` (decoding is the same in all).

    The default is the newest revision (:data:`LATEST_PROTOCOL_VERSION`); code
    that encodes for a session or a request names the revision it speaks.

    ``engine_completes=True``: the converter of an engine that writes some required
    members of a message body itself, after encoding what the application gave it
    (2026-07-28: a request's ``_meta`` with its revision and capabilities, a cacheable
    result's ``ttlMs``/``cacheScope``). A field that is required only from some revision
    on (``required_from``) is then left out when it is None instead of refused;
    everything else (the members and classes a revision lacks) is as exact as ever.
    """
    if revision not in REVISIONS:
        raise LocalProtocolError(f"unsupported protocol revision {revision!r}")
    return _build(revision, engine_completes)


def encode(obj: Any, revision: str = LATEST_PROTOCOL_VERSION, as_type: Any = None) -> Any:
    """Turn a model instance into JSON-ready Python values for ``revision``
    (by default the newest revision, :data:`LATEST_PROTOCOL_VERSION`).

    Exact per revision: fields the revision lacks are left out, classes it lacks
    are refused (``LocalProtocolError``), and so are values it cannot express.
    ``as_type`` names the type of a value that is not a model object itself (a
    dict or list of them: ``encode(requests, revision, InputRequests)``)."""
    if as_type is None:
        return converter_for(revision).unstructure(obj)
    return converter_for(revision).unstructure(obj, unstructure_as=as_type)


#: (revision, class, field) -> the field's unstructure hook, or None: what :func:`field_writer`
#: found (a caller on a hot path may look here first)
FIELD_WRITERS: dict[tuple[str, type, str], Callable[[Any], Any] | None] = {}


def field_writer(cls: type, name: str, revision: str) -> Callable[[Any], Any] | None:
    """How unstructuring a ``cls`` object for ``revision`` writes its field ``name``.

    For the engine, which writes the fixed members of a JSON-RPC envelope
    (``jsonrpc``, ``method``, ``id``) itself and only the one typed member
    (``params``, ``result``) through the converter, so that no envelope object
    is built and unstructured per message (bench W1). The output is what
    ``converter_for(revision).unstructure(cls(...))`` gives. None when the
    class's own hook does more than write each field as it is (the class is
    newer than ``revision``, has subclasses, a validator, an open or a
    revision-dependent field, or ``_meta``): the message then goes through
    the class.
    """
    key = (revision, cls, name)
    try:
        return FIELD_WRITERS[key]
    except KeyError:
        pass
    conv = converter_for(revision)
    fields = wire_fields(cls)
    plain = (
        exists_in(cls, revision)
        and not cls.__subclasses__()
        and all(a.validator is None and a.converter is None for a in attrs.fields(cls))
        and all(
            not f.extra
            and not f.older
            and f.exists_in(revision)
            # (a member the caller writes itself is never None: an id is always given;
            # the typed member, absent, is left out, which a revision requiring it refuses)
            and (f.required_from is None or revision < f.required_from or f.name != name)
            and f.wire != "_meta"
            for f in fields
        )
    )
    found = next((f for f in fields if f.name == name), None)
    hook = None
    if plain and found is not None:
        tp = found.type
        # a base-class field (``result: Result``) holds a subclass: its hook by the value's class
        # straight away (the field's own hook would look once more, see _by_runtime_class)
        subclassed = isinstance(tp, type) and attrs.has(tp) and tp.__subclasses__()
        hook = _FACTORIES[revision].by_class if subclassed else conv.get_unstructure_hook(tp)
    FIELD_WRITERS[key] = hook
    return hook


#: whose converter :func:`decode` uses: decoding is the same in every one, and a
#: session's engine encodes with this one too (no second converter to build)
_DECODING_REVISION: Final = LATEST_LEGACY_REVISION
#: type -> structure hook, for :func:`decode` (decoding is the same in every revision)
_DECODERS: dict[Any, Callable[[Any, Any], Any]] = {}


@typing.overload
def decode(value: Any, tp: type[T]) -> T: ...


@typing.overload
def decode(value: Any, tp: Any) -> Any: ...


def decode(value: Any, tp: Any) -> Any:
    """Decode a JSON value into ``tp`` (a class, or a union / list / dict of
    them); :class:`DecodeError` names the failing path."""
    hook = _DECODERS.get(tp)
    if hook is None:
        converter_for(_DECODING_REVISION)
        hook = _DECODERS[tp] = _FACTORIES[_DECODING_REVISION].hook(tp)
    try:
        return hook(value, tp)
    except DecodeError:
        raise
    except RecursionError as e:
        raise DecodeError("", "value nested too deeply") from e


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
