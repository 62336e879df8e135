"""RFC 6570 URI templates (levels 1-3), expanded and matched.

Resource templates (server/resources#resource-templates) name resources by
URI template. The server must go the other way too: given a concrete URI from
``resources/read``, find the template and the variable values. Matching is the
inverse of expansion for single-valued variables, which is what resource URIs
use; a value never spans a separator of its operator.
"""

import re
import urllib.parse
from typing import Final

import attrs

from ..schema._base import install_model_methods

__all__ = ["UriTemplate", "TemplateError"]


class TemplateError(ValueError):
    """A malformed URI template."""


@attrs.frozen(repr=False, eq=False)
class _Op:
    first: str
    sep: str
    named: bool
    empty: str  # what "name=" becomes for an empty value (";name" vs "name=")
    reserved: bool  # reserved characters pass through unencoded


_OPS: Final[dict[str, _Op]] = {
    "": _Op("", ",", False, "", False),
    "+": _Op("", ",", False, "", True),
    "#": _Op("#", ",", False, "", True),
    ".": _Op(".", ".", False, "", False),
    "/": _Op("/", "/", False, "", False),
    ";": _Op(";", ";", True, "", False),
    "?": _Op("?", "&", True, "=", False),
    "&": _Op("&", "&", True, "=", False),
}
_EXPR = re.compile(r"\{([^{}]*)\}")
_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*")
_UNRESERVED_SAFE = "-._~"
_RESERVED_SAFE = "-._~:/?#[]@!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"
# what expansion leaves unencoded (the safe characters above), or a %XX triplet
_UNRESERVED_VALUE = rf"(?:[A-Za-z0-9{re.escape(_UNRESERVED_SAFE)}]|{_PCT})*"
_RESERVED_VALUE = rf"(?:[A-Za-z0-9{re.escape(_RESERVED_SAFE)}]|{_PCT})*"


class UriTemplate:
    """A parsed template: ``expand(values)`` and ``match(uri)``.

    >>> weather = UriTemplate("weather://{city}/{?units}")
    >>> weather.expand({"city": "Oslo", "units": "metric"})
    'weather://Oslo/?units=metric'
    >>> weather.match("weather://Bergen/")
    {'city': 'Bergen'}
    """

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts: list[str | tuple[_Op, list[str]]] = []
        pos = 0
        for m in _EXPR.finditer(template):
            self._parts.append(template[pos : m.start()])
            body = m.group(1)
            op_char = body[:1] if body[:1] in _OPS and body[:1] != "" else ""
            names = body[len(op_char) :].split(",")
            if not names or any(not _VARNAME.fullmatch(n) for n in names):
                raise TemplateError(f"bad expression {{{body}}} in {template!r}")
            self._parts.append((_OPS[op_char], names))
            pos = m.end()
        rest = template[pos:]
        if "{" in rest or "}" in rest:
            raise TemplateError(f"unbalanced braces in {template!r}")
        self._parts.append(rest)
        self.variables = [n for p in self._parts if isinstance(p, tuple) for n in p[1]]
        self._regex = re.compile(self._build_regex())

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def expand(self, values: dict[str, str]) -> str:
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            op, names = part
            pieces = []
            for name in names:
                if name not in values:
                    continue
                value = urllib.parse.quote(str(values[name]), safe=_RESERVED_SAFE if op.reserved else _UNRESERVED_SAFE)
                if op.named:
                    pieces.append(f"{name}={value}" if value or op.empty else name)
                else:
                    pieces.append(value)
            if pieces:
                out.append(op.first + op.sep.join(pieces))
        return "".join(out)

    def _build_regex(self) -> str:
        rx = []
        for i, part in enumerate(self._parts):
            if isinstance(part, str):
                rx.append(re.escape(part))
                continue
            op, names = part
            # a value holds only what expansion leaves unencoded, plus %XX triplets (RFC 6570 3.2.1)
            value = _RESERVED_VALUE if op.reserved else _UNRESERVED_VALUE
            if op.named:
                alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                item = f"(?:{alternatives})(?:={value})?"
            else:
                item = value
            # any defined subset of the variables, in order; the pieces are told apart in match()
            body = f"(?P<e{i}>{item}(?:{re.escape(op.sep)}{item})*)"
            rx.append(f"(?:{re.escape(op.first)}{body})?" if op.first else body)
        return "".join(rx)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variable values if ``uri`` is an expansion of this template, else None."""
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        values: dict[str, str] = {}
        for i, part in enumerate(self._parts):
            if isinstance(part, str):
                continue
            text = m.group(f"e{i}")
            if text is None:
                continue
            op, names = part
            if not op.named:
                # undefined variables are skipped by expansion: the pieces fill the first names
                pieces = text.split(op.sep, len(names) - 1)
                values.update(zip(names, map(urllib.parse.unquote, pieces), strict=False))
                continue
            for piece in text.split(op.sep):
                name, _, value = piece.partition("=")
                if name in values:
                    return None  # a variable given twice is no expansion of ours
                values[name] = urllib.parse.unquote(value)
        return values


# repr, eq and hash shared with the data model, not compiled per class at import (bench W7)
install_model_methods(globals())
