"""basic/index#meta: the format of ``_meta`` keys.

A key is an optional *prefix* (dot-separated labels, then ``/``) and a
*name*. Labels start with a letter and end with a letter or digit, with
letters, digits and hyphens between (#26, #27); a non-empty name begins and
ends with an alphanumeric, with hyphens, underscores, dots and alphanumerics
between (#29, #30). A prefix whose second label is ``modelcontextprotocol``
or ``mcp`` is reserved for MCP (:func:`is_reserved`).

The grammar itself sits in the data model (``mcp_ref.schema._meta_keys``),
because encoding checks every ``_meta`` it writes, at any depth: we never
*send* a malformed key (LocalProtocolError, nothing sent), whether in a
request's params or in a tool, a content block or a resource inside a
result. Malformed keys we *receive* never fail a message: values under
``_meta`` are never interpreted beyond the keys the spec defines (#25); the
engine counts those of the top-level params (``meta:malformed-key``) and
leaves nested ones alone (see spec_notes/basic/index.md).
"""

from collections.abc import Mapping
from typing import Any

from ..schema._meta_keys import bad_meta_keys, is_reserved, meta_key_problem

__all__ = ["meta_key_problem", "is_reserved", "bad_meta_keys", "check_meta_keys", "PROGRESS_TOKEN_KEY"]

PROGRESS_TOKEN_KEY = "progressToken"


def check_meta_keys(meta: Mapping[str, Any] | None, where: str) -> None:
    """Raise ValueError naming ``where`` if ``meta`` has a malformed key (for
    registrations: the mistake shows when it is made, not at the first list)."""
    for problem in bad_meta_keys(meta):
        # [basic/index#26, #27, #29]
        raise ValueError(f"{where}: {problem}")
