"""The grammar of ``_meta`` keys (basic/index#meta), where the data model can use it.

It lives in the schema layer because the converter checks every ``_meta`` it
writes (``_converter.attrs_unstructure``); :mod:`mcp_ref.basic.meta` is its
public home and re-exports it.

A key is an optional *prefix* (dot-separated labels, then ``/``) and a
*name*. Labels start with a letter and end with a letter or digit, with
letters, digits and hyphens between (#26, #27); a non-empty name begins and
ends with an alphanumeric, with hyphens, underscores, dots and alphanumerics
between (#29, #30). A prefix whose second label is ``modelcontextprotocol``
or ``mcp`` is reserved for MCP (:func:`is_reserved`).
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["meta_key_problem", "is_reserved", "bad_meta_keys", "WELL_FORMED"]

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


#: well-formed keys already seen (short ones, a bounded number): the keys we
#: write are few and repeat on every message, so writing checks them with one
#: set lookup. Only short keys, and never more than WELL_FORMED_LIMIT: a peer's
#: keys pass here too and must not pin memory.
WELL_FORMED: set[str] = set()
WELL_FORMED_LIMIT = 4096


def meta_key_problem(key: str) -> str | None:
    """What is wrong with a ``_meta`` key (None when it is well formed)."""
    if key in WELL_FORMED:
        return None
    problem = _problem(key)
    if problem is None and len(key) <= 128 and len(WELL_FORMED) < WELL_FORMED_LIMIT:
        WELL_FORMED.add(key)
    return problem


def _problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        # [basic/index#26, #27] dot-separated labels, then a slash
        if not _PREFIX.fullmatch(prefix):
            return f"_meta key {key!r}: the prefix must be dot-separated labels (letter first, letter or digit last)"
    else:
        name = key
    # [basic/index#29, #30] the name starts and ends with an alphanumeric
    if not _NAME.fullmatch(name):
        return f"_meta key {key!r}: the name must begin and end with a letter or digit"
    return None


def is_reserved(key: str) -> bool:
    """Whether the key's prefix is reserved for MCP (second label ``modelcontextprotocol`` or ``mcp``)."""
    prefix, slash, _ = key.rpartition("/")
    labels = prefix.split(".") if slash else []
    return len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp")


def bad_meta_keys(meta: Mapping[str, Any] | None) -> Iterable[str]:
    """The problems of every malformed key of a ``_meta`` object."""
    for key in meta or ():
        problem = meta_key_problem(key) if isinstance(key, str) else f"_meta key {key!r} is not a string"
        if problem is not None:
            yield problem
