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

__all__ = ["UriTemplate", "TemplateError"]


class TemplateError(ValueError):
    """A malformed URI template."""


@attrs.frozen
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


class UriTemplate:
    """A parsed template: ``expand(values)`` and ``match(uri)``."""

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
        for part in self._parts:
            if isinstance(part, str):
                rx.append(re.escape(part))
                continue
            op, names = part
            value = "[^/?#&,;.]*" if not op.reserved else "[^,]*" if len(names) > 1 else ".*"
            if op.sep == "/":
                value = "[^/?#]*"
            groups = []
            for name in names:
                group = f"(?P<{_group(name)}>{value})"
                groups.append(re.escape(name) + "=" + group if op.named else group)
            body = re.escape(op.sep).join(groups)
            rx.append(f"(?:{re.escape(op.first)}{body})?" if op.first else body)
        return "".join(rx)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variable values if ``uri`` is an expansion of this template, else None."""
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        return {
            name: urllib.parse.unquote(m.group(_group(name)))
            for name in self.variables
            if m.group(_group(name)) is not None
        }


def _group(name: str) -> str:
    return "v_" + re.sub(r"[^A-Za-z0-9_]", lambda c: f"_{ord(c.group()):x}_", name)
