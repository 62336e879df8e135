"""basic/index#meta: the format of ``_meta`` keys.

A key is an optional *prefix* (dot-separated labels, then ``/``) and a
*name*. Labels start with a letter and end with a letter or digit, with
letters, digits and hyphens between (#26, #27); a non-empty name begins and
ends with an alphanumeric, with hyphens, underscores, dots and alphanumerics
between (#29, #30). A prefix whose second label is ``modelcontextprotocol``
or ``mcp`` is reserved for MCP (:func:`is_reserved`).

The engine refuses to *send* a malformed key (LocalProtocolError) and counts
malformed keys it *receives* without rejecting the message: values under
``_meta`` are never interpreted beyond the keys the spec defines (#25).
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["meta_key_problem", "is_reserved", "bad_meta_keys", "PROGRESS_TOKEN_KEY"]

PROGRESS_TOKEN_KEY = "progressToken"

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")


def meta_key_problem(key: str) -> str | None:
    """What is wrong with a ``_meta`` key (None when it is well formed)."""
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
