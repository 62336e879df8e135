"""RFC 6570 templates as resource templates use them: expand and match."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_ref.server.uri_template import TemplateError, UriTemplate


@pytest.mark.parametrize(
    ("template", "values", "uri"),
    [
        ("file:///{path}", {"path": "a b"}, "file:///a%20b"),
        ("file:///{+path}", {"path": "dir/sub/x.txt"}, "file:///dir/sub/x.txt"),
        ("test://template/{id}/data", {"id": "42"}, "test://template/42/data"),
        ("users{/id}", {"id": "7"}, "users/7"),
        ("search{?q,lang}", {"q": "trio", "lang": "en"}, "search?q=trio&lang=en"),
        ("x{.ext}", {"ext": "json"}, "x.json"),
        ("db://{schema}/{table}", {"schema": "public", "table": "users"}, "db://public/users"),
        # simple values keep the unreserved characters, dots included (RFC 6570 3.2.2)
        ("file:///docs/{name}", {"name": "readme.md"}, "file:///docs/readme.md"),
        ("file:///docs/{name}", {"name": "a-b_c~d.tar.gz"}, "file:///docs/a-b_c~d.tar.gz"),
        ("file:///docs/{name}", {"name": "a/b?c"}, "file:///docs/a%2Fb%3Fc"),
        ("file:///docs/{name}", {"name": "été"}, "file:///docs/%C3%A9t%C3%A9"),
        ("mail://{user}/inbox", {"user": "ada@example.com"}, "mail://ada%40example.com/inbox"),
        # reserved expansion lets reserved characters through
        ("file:///{+path}", {"path": "a/b.c?d=e#f"}, "file:///a/b.c?d=e#f"),
        ("doc{#section}", {"section": "intro/part.1"}, "doc#intro/part.1"),
        ("users{/id,tab}", {"id": "7", "tab": "x.y"}, "users/7/x.y"),
        # any subset of the query variables may be defined
        ("search{?q,lang}", {"lang": "en"}, "search?lang=en"),
        ("search{?q,lang}", {"q": "a.b"}, "search?q=a.b"),
        ("search{?q,lang}", {}, "search"),
        ("search{?q}{&page}", {"q": "x", "page": "2"}, "search?q=x&page=2"),
        ("x{;a,b}", {"a": "", "b": "3"}, "x;a;b=3"),
    ],
)
def test_expand_and_match_are_inverse(template: str, values: dict[str, str], uri: str) -> None:
    t = UriTemplate(template)
    assert t.expand(values) == uri
    assert t.match(uri) == values


def test_no_match() -> None:
    t = UriTemplate("test://template/{id}/data")
    assert t.match("test://template/1/2/data") is None  # a simple value never spans "/"
    assert t.match("test://other/1/data") is None
    assert UriTemplate("file:///{+path}").match("file:///a/b") == {"path": "a/b"}
    # characters simple expansion would have encoded cannot be part of a simple value
    assert UriTemplate("file:///docs/{name}").match("file:///docs/a?b") is None
    assert UriTemplate("file:///docs/{name}").match("file:///docs/a b") is None
    # a query variable the template does not name, or one given twice
    assert UriTemplate("search{?q,lang}").match("search?other=1") is None
    assert UriTemplate("search{?q,lang}").match("search?q=1&q=2") is None


_TEMPLATES = [
    "file:///docs/{name}",
    "test://template/{id}/data",
    "db://{schema}/{table}",
    "file:///{+path}",
    "users{/id,tab}",
    "search{?q,lang}",
    "doc{#section}",
    "x{;a,b}",
    "x{.ext}",
]


@given(
    template=st.sampled_from(_TEMPLATES),
    data=st.data(),
)
def test_match_inverts_expand(template: str, data: st.DataObject) -> None:
    t = UriTemplate(template)
    # dots, tildes, hyphens, reserved characters, percent signs and non-ASCII text
    chars = st.characters(codec="utf-8", exclude_categories=("Cs",))
    text = st.one_of(st.text(alphabet="abc.-_~", min_size=1), st.text(chars, min_size=1))
    # an expression without a leading character always matches (as "" if need be): keep it defined
    required = set(re.findall(r"\{\+?(\w+)\}", template))
    values = {}
    for name in t.variables:
        if name in required or data.draw(st.booleans()):
            values[name] = data.draw(text)
    if template == "users{/id,tab}" and "id" not in values:
        values.pop("tab", None)  # a later path segment alone would fill the first name
    assert t.match(t.expand(values)) == values


@pytest.mark.parametrize("bad", ["x{", "x}", "x{a b}", "{}"])
def test_malformed_templates(bad: str) -> None:
    with pytest.raises(TemplateError):
        UriTemplate(bad)
