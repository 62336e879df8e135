"""RFC 6570 templates as resource templates use them: expand and match."""

import pytest

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


@pytest.mark.parametrize("bad", ["x{", "x}", "x{a b}", "{}"])
def test_malformed_templates(bad: str) -> None:
    with pytest.raises(TemplateError):
        UriTemplate(bad)
