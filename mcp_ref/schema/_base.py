"""Conventions shared by every module of the data model.

* Classes are ``attrs.frozen(kw_only=True, repr=False, eq=False)`` and take their
  names from ``schema.ts`` verbatim. ``repr=False, eq=False``: they share
  :func:`model_repr`, :func:`model_eq` and :func:`model_hash` (installed by
  :func:`install_model_methods`), which behave as the methods attrs would
  generate, instead of compiling three per class at import (bench W7:
  ``import mcp_ref`` took 7 % less, 224 -> 208 ms). Fields are snake_case.
  The wire name of a field is its name in camelCase, except ``meta`` which is
  ``_meta``. A field may name another wire key with ``metadata={"wire": "..."}``.
* An optional field has the default ``None`` and is left out of the JSON when
  it is ``None``; JSON ``null`` is *not* accepted for it (the schema does not
  allow null there) unless the field is marked :data:`NULLABLE`. A required
  field has no default and is always written, so a required nullable field
  (``Task.ttl``) is written as ``null``.
* Revisions: a class with no counterpart before some revision (not by name:
  a structure that was inline or had another name counts) is decorated with
  :func:`since`; a field that first appears later than its class carries
  ``metadata=NEW_IN_2025_06_18`` (``NEW_IN_2025_03_26``, ``NEW_IN_2025_11_25``,
  ``NEW_IN_2026_07_28``). Encoding for an older revision leaves such fields
  out and refuses such classes. The other direction: a class a revision
  removed is decorated with :func:`until` (it exists *before* that revision),
  a removed field carries ``metadata=REMOVED_IN_2026_07_28`` (or
  :func:`removed_in`), and an inherited field a subclass lost in a revision is
  named with :func:`fields_until`. Encoding for that revision or a later one
  refuses the class and leaves the field out (refuses it when it is also
  :data:`MEANINGFUL`). Decoding never looks at these marks.
* A field that is required on the wire (in the revisions that have it, or from
  some revision on: :func:`required_from`) but that a peer of another revision
  may leave out has a default so that decoding stays tolerant; encoding for a
  revision that requires it refuses the default ``None``
  (``Result.result_type``, ``RequestParams.meta`` in 2026-07-28).
* Open types (``Result`` and everything that extends it, the capability
  objects, the pieces of JSON Schema in elicitation) have an ``extra`` field
  (metadata :data:`EXTRA`) that keeps the keys this model does not know and
  writes them back out. Other classes ignore unknown keys.
* A field whose *type* changed between revisions (not just appeared) records
  the older type with :func:`older_type`; encoding for a revision before the
  change refuses values that revision cannot express (LocalProtocolError).
* Unions whose members cannot be told apart by a literal field register a
  discriminator function with :func:`discriminate`.
* A validator that rejects a value raises :class:`FieldValueError` naming the
  wire path, so a decode failure reads ``inputSchema.type: expected 'object'``.
"""

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

__all__ = [
    "REVISIONS",
    "LEGACY_REVISIONS",
    "MODERN_REVISIONS",
    "LATEST_PROTOCOL_VERSION",
    "LATEST_LEGACY_REVISION",
    "is_modern",
    "JSONRPC_VERSION",
    "NEW_IN_2025_03_26",
    "NEW_IN_2025_06_18",
    "NEW_IN_2025_11_25",
    "NEW_IN_2026_07_28",
    "REMOVED_IN_2026_07_28",
    "since",
    "since_of",
    "until",
    "until_of",
    "exists_in",
    "removed_in",
    "fields_until",
    "fields_until_of",
    "required_from",
    "REQUIRED_ON_WIRE",
    "discriminate",
    "UNION_DISCRIMINATORS",
    "DISCRIMINATOR_KEYS",
    "EXTRA",
    "NULLABLE",
    "MEANINGFUL",
    "older_type",
    "Narrowed",
    "LAZY_TYPES",
    "lazy_type",
    "FieldValueError",
    "UNIT_INTERVAL",
    "in_unit_interval",
    "wire_name",
    "model_repr",
    "install_model_methods",
    "slot_builder",
]

#: Every protocol revision mcp_ref speaks, oldest first. Revision strings are
#: dates, so they compare in time order as strings (``revision < "2025-11-25"``).
REVISIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: The legacy era: revisions negotiated by ``initialize`` in a session
#: (mcp_ref.connection.Connection). The session engine negotiates these only.
LEGACY_REVISIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: The modern era: no session; every request names its revision in ``_meta``
#: (``io.modelcontextprotocol/protocolVersion``). Never offered by ``initialize``.
MODERN_REVISIONS: Final = ("2026-07-28",)
#: The newest revision mcp_ref speaks (what the current spec calls its version).
#: Not what ``initialize`` offers: that is :data:`LATEST_LEGACY_REVISION`.
LATEST_PROTOCOL_VERSION: Final = REVISIONS[-1]
#: The newest revision a session (``initialize``) negotiates, and the one its
#: engine encodes with before negotiation ends; also the form in which
#: capabilities and task outcomes are held as JSON inside a session.
LATEST_LEGACY_REVISION: Final = LEGACY_REVISIONS[-1]
JSONRPC_VERSION: Final = "2.0"


def is_modern(revision: str) -> bool:
    """Whether ``revision`` is of the modern (sessionless, per-request ``_meta``) era."""
    return revision >= MODERN_REVISIONS[0]


NEW_IN_2025_03_26: Final[Mapping[str, Any]] = {"since": "2025-03-26"}
NEW_IN_2025_06_18: Final[Mapping[str, Any]] = {"since": "2025-06-18"}
NEW_IN_2025_11_25: Final[Mapping[str, Any]] = {"since": "2025-11-25"}
NEW_IN_2026_07_28: Final[Mapping[str, Any]] = {"since": "2026-07-28"}
#: metadata of a field that 2026-07-28 removed (it exists before that revision)
REMOVED_IN_2026_07_28: Final[Mapping[str, Any]] = {"until": "2026-07-28"}
#: metadata of a field that is required on the wire wherever it exists, though
#: it has a default (decoding stays tolerant of a peer of another revision)
REQUIRED_ON_WIRE: Final[Mapping[str, Any]] = {"required": "2024-11-05"}
#: metadata of the catch-all field of open types
EXTRA: Final[Mapping[str, Any]] = {"extra": True}
#: metadata of an optional field that also accepts JSON null (decoded as None)
NULLABLE: Final[Mapping[str, Any]] = {"nullable": True}
#: metadata of a field whose value changes what the message asks for (task
#: augmentation, tools for sampling): encoding for a revision without the field
#: refuses a set value (LocalProtocolError) rather than silently dropping it
MEANINGFUL: Final[Mapping[str, Any]] = {"meaningful": True}

T = TypeVar("T", bound=type)
_R = TypeVar("_R")


def since(revision: str) -> Callable[[T], T]:
    """Mark a class as first defined in ``revision``."""
    if revision not in REVISIONS:
        raise ValueError(f"unknown revision {revision!r}")

    def mark(cls: T) -> T:
        cls.__mcp_since__ = revision  # type: ignore[attr-defined]
        return cls

    return mark


def since_of(cls: type) -> str:
    """The revision a class first appears in (the oldest, 2024-11-05, when unmarked).

    Read from the class itself, never inherited: ``CallToolRequestParams``
    extends a base that may be newer or older than it.
    """
    return str(cls.__dict__.get("__mcp_since__", REVISIONS[0]))


def until(revision: str) -> Callable[[T], T]:
    """Mark a class as removed in ``revision``: it exists in the revisions before it only."""
    if revision not in REVISIONS:
        raise ValueError(f"unknown revision {revision!r}")

    def mark(cls: T) -> T:
        cls.__mcp_until__ = revision  # type: ignore[attr-defined]
        return cls

    return mark


def until_of(cls: type) -> str | None:
    """The revision that removed a class (None: it is in every revision from its ``since`` on).

    Read from the class itself, never inherited, as :func:`since_of`.
    """
    found = cls.__dict__.get("__mcp_until__")
    return None if found is None else str(found)


def exists_in(cls: type, revision: str) -> bool:
    """Whether a class of the data model is part of ``revision``."""
    if since_of(cls) > revision:
        return False
    removed = until_of(cls)
    return removed is None or revision < removed


def removed_in(revision: str, **more: Any) -> dict[str, Any]:
    """Field metadata: the field exists before ``revision`` only."""
    if revision not in REVISIONS:
        raise ValueError(f"unknown revision {revision!r}")
    return {"until": revision, **more}


def required_from(revision: str, **more: Any) -> dict[str, Any]:
    """Field metadata: from ``revision`` on, the field is required on the wire
    (encoding refuses ``None``); decoding still takes it absent."""
    if revision not in REVISIONS:
        raise ValueError(f"unknown revision {revision!r}")
    return {"required": revision, **more}


def fields_until(revision: str, *names: str) -> Callable[[T], T]:
    """Mark inherited fields a class no longer has from ``revision`` on.

    For a class whose base keeps a field the class itself lost: 2026-07-28's
    ``ElicitResult`` and ``ListRootsResult`` extend no ``Result`` (no
    ``resultType``, no ``_meta``). Inherited by subclasses.
    """
    if revision not in REVISIONS:
        raise ValueError(f"unknown revision {revision!r}")

    def mark(cls: T) -> T:
        marks = dict(fields_until_of(cls))
        marks.update(dict.fromkeys(names, revision))
        cls.__mcp_fields_until__ = marks  # type: ignore[attr-defined]
        return cls

    return mark


def fields_until_of(cls: type) -> Mapping[str, str]:
    """field name -> the revision that removed it from ``cls`` (see :func:`fields_until`)."""
    found: Mapping[str, str] = getattr(cls, "__mcp_fields_until__", {})
    return found


def older_type(changed_in: str, tp: Any, **more: Any) -> dict[str, Any]:
    """Field metadata: before ``changed_in`` the field had type ``tp``.

    ``tp`` without ``None`` means the field was required then. Combine with
    other metadata: ``field(metadata={**NEW_IN_2025_06_18, **older_type(...)})``.
    """
    if changed_in not in REVISIONS:
        raise ValueError(f"unknown revision {changed_in!r}")
    return {"older": ((changed_in, tp),), **more}


class Narrowed:
    """A type narrowed by a check, for :func:`older_type`: what an older revision
    allowed of a field when a type alone cannot say it (2025-11-25's
    ``outputSchema`` is a JSON Schema whose ``type`` is "object";
    2026-07-28's may be any schema). ``base`` is the type, ``check`` the further
    condition on a value of it, ``description`` what the revision takes, in words."""

    __slots__ = ("base", "check", "description")

    def __init__(self, base: Any, check: Callable[[Any], bool], description: str) -> None:
        self.base = base
        self.check = check
        self.description = description

    def __repr__(self) -> str:
        return f"Narrowed({self.description})"


#: a stand-in type -> (module, name) of the type it stands for: see :func:`lazy_type`
LAZY_TYPES: dict[Any, tuple[str, str]] = {}


def lazy_type(name: str, module: str, attribute: str) -> Any:
    """A stand-in for the type ``module.attribute`` of the data model, resolved on first use.

    For a field of a class that every session loads whose type lives in a chapter
    only some need: ``CallToolRequestParams.input_responses`` (2026-07-28) holds
    sampling, roots and elicitation results, whose classes a tools-only server of
    an older revision never builds (bench W7). The converter decodes and encodes
    the field as the real type, importing its chapter the first time a value is
    there. To type checkers the field is a plain dict (the values are model objects).
    """
    stand_in = type(name, (dict,), {"__module__": module, "__doc__": f"Decoded as {module}.{attribute}."})
    LAZY_TYPES[stand_in] = (module, attribute)
    return stand_in


class FieldValueError(ValueError):
    """A validator refused a value; ``path`` is the wire path inside the object, ``owner``
    (if given) what the object is (``"tool 'search'"``: registration names what it refuses)."""

    def __init__(self, path: str, problem: str, *, owner: str | None = None) -> None:
        super().__init__(f"{owner}: {path}: {problem}" if owner else f"{path}: {problem}")
        self.path = path
        self.problem = problem
        self.owner = owner


#: union type -> function(json value) -> member class (or None: not decidable)
UNION_DISCRIMINATORS: dict[Any, Callable[[Any], type | None]] = {}
#: union type -> the key its chooser reads first (named in decode errors)
DISCRIMINATOR_KEYS: dict[Any, str] = {}


def discriminate(union: Any, chooser: Callable[[Any], type | None], key: str | None = None) -> None:
    """Register how to pick the member of ``union`` a JSON value (an object)
    decodes to. ``chooser`` returns None when no member fits; ``key`` is the
    field it mainly looks at, so the error can say "type: expected one of ..."."""
    UNION_DISCRIMINATORS[union] = chooser
    if key is not None:
        DISCRIMINATOR_KEYS[union] = key


def wire_name(field_name: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The JSON key of a field: ``meta`` -> ``_meta``, snake_case -> camelCase."""
    if metadata and "wire" in metadata:
        return str(metadata["wire"])
    if field_name == "meta":
        return "_meta"
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


#: metadata of a number the schema bounds to [0, 1] (priorities)
UNIT_INTERVAL: Final[Mapping[str, Any]] = {"minimum": 0, "maximum": 1}


def in_unit_interval(instance: Any, attribute: Any, value: Any) -> None:
    """attrs validator: ``None`` or a number from 0 to 1 (NaN is not)."""
    if value is not None and not 0 <= value <= 1:
        raise FieldValueError(wire_name(attribute.name, attribute.metadata), "expected a number from 0 to 1")


def model_repr(self: Any) -> str:
    """``Name(field=value, ...)``: the repr attrs would generate, shared by every model class."""
    fields = ", ".join(f"{a.name}={getattr(self, a.name)!r}" for a in type(self).__attrs_attrs__)
    return f"{type(self).__qualname__.rsplit('>.', 1)[-1]}({fields})"


#: model class -> names of the fields that take part in equality and hashing
_EQ_FIELDS: dict[type, tuple[str, ...]] = {}


def _eq_fields(cls: type) -> tuple[str, ...]:
    names = _EQ_FIELDS.get(cls)
    if names is None:
        names = _EQ_FIELDS[cls] = tuple(a.name for a in cls.__attrs_attrs__ if a.eq)  # type: ignore[attr-defined]
    return names


def model_eq(self: Any, other: Any) -> Any:
    """The ``__eq__`` attrs would generate: the same class, then the fields compared in
    order, ``self.a == other.a and self.b == other.b ...`` (its value, not just a bool)."""
    if other.__class__ is not self.__class__:
        return NotImplemented
    result: Any = True
    for name in _eq_fields(type(self)):
        result = getattr(self, name) == getattr(other, name)
        if not result:
            return result
    return result


def model_hash(self: Any) -> int:
    """The hash of the class and the fields (frozen classes hash by value, as with attrs)."""
    cls = type(self)
    return hash((cls, *[getattr(self, n) for n in _eq_fields(cls)]))


def slot_builder(cls: type[_R]) -> Callable[..., _R]:
    """A function making ``cls(v0, v1, ...)`` (every field, by position, in attrs' order)
    for a frozen slotted attrs class of two to five fields whose ``__init__`` only sets
    them: it fills the new object's slots directly. A frozen class's ``__init__`` sets
    each field through ``object.__setattr__``, which finds the slot by name every time;
    this takes about three quarters of the time. For the records the engine makes per
    message (bench W1), not for the data model, whose classes are built by their
    ``__init__`` or the decoder. Plain closures, nothing compiled (bench W7).
    """
    fields = cls.__attrs_attrs__  # type: ignore[attr-defined]
    if any(a.validator or a.converter or not a.init for a in fields) or hasattr(cls, "__attrs_post_init__"):
        raise TypeError(f"{cls.__name__}.__init__ does more than set its fields")
    if not 2 <= len(fields) <= 5:
        raise TypeError(f"{cls.__name__} has {len(fields)} fields (2 to 5 are built)")
    new = object.__new__
    setters: list[Any] = [vars(cls)[a.name].__set__ for a in fields]
    s0, s1, s2, s3, s4 = setters + [None] * (5 - len(fields))

    def build2(v0: Any, v1: Any) -> Any:
        o = new(cls)
        s0(o, v0)
        s1(o, v1)
        return o

    def build3(v0: Any, v1: Any, v2: Any) -> Any:
        o = new(cls)
        s0(o, v0)
        s1(o, v1)
        s2(o, v2)
        return o

    def build4(v0: Any, v1: Any, v2: Any, v3: Any) -> Any:
        o = new(cls)
        s0(o, v0)
        s1(o, v1)
        s2(o, v2)
        s3(o, v3)
        return o

    def build5(v0: Any, v1: Any, v2: Any, v3: Any, v4: Any) -> Any:
        o = new(cls)
        s0(o, v0)
        s1(o, v1)
        s2(o, v2)
        s3(o, v3)
        s4(o, v4)
        return o

    return (build2, build3, build4, build5)[len(fields) - 2]


def install_model_methods(namespace: Mapping[str, Any], *, hashable: bool = True) -> None:
    """Give the attrs classes in ``namespace`` the shared repr, eq and hash where they have none of their own.

    For classes made with ``repr=False, eq=False``: frozen ones (``hashable``) hash by
    value; ``hashable=False`` is for mutable ones (``attrs.define``), which attrs makes
    unhashable when it gives them ``__eq__``, and so does this.
    """
    for value in list(namespace.values()):
        if not (isinstance(value, type) and hasattr(value, "__attrs_attrs__")):
            continue
        own = vars(value)
        if "__repr__" not in own:
            value.__repr__ = model_repr  # type: ignore[method-assign,assignment]
        if "__eq__" not in own:
            value.__eq__ = model_eq  # type: ignore[method-assign,assignment]
            value.__hash__ = model_hash if hashable else None  # type: ignore[method-assign,assignment]
