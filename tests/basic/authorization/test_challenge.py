"""WWW-Authenticate: parsing every shape RFC 9110 allows, writing Bearer challenges."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_ref.basic.authorization.challenge import (
    BearerChallenge,
    Challenge,
    bearer_challenge,
    format_bearer_challenge,
    parse_challenges,
)


@pytest.mark.req("basic/authorization#21", "basic/authorization#14")
def test_the_spec_example_with_a_line_break() -> None:
    header = (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",\n'
        '                         scope="files:read"'
    ).replace("\n", "")
    assert bearer_challenge(header) == BearerChallenge(
        resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"
    )


@pytest.mark.req("basic/authorization#65")
def test_insufficient_scope_challenge() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write user:profile", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="Additional file write permission required"'
    )
    challenge = bearer_challenge(header)
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scopes() == ("files:read", "files:write", "user:profile")
    assert challenge.error_description == "Additional file write permission required"


def test_several_challenges_token68_and_case() -> None:
    header = 'Basic realm="x", NEGOTIATE abc123==, BEARER Scope=a, RESOURCE_METADATA="https://r/x"'
    assert parse_challenges(header) == [
        Challenge("basic", {"realm": "x"}),
        Challenge("negotiate", {}, "abc123=="),
        Challenge("bearer", {"scope": "a", "resource_metadata": "https://r/x"}),
    ]
    assert bearer_challenge(header) == BearerChallenge(scope="a", resource_metadata="https://r/x")
    # two header lines are one list
    assert bearer_challenge(['Basic realm="x"', 'Bearer scope="s"']) == BearerChallenge(scope="s")


def test_quoted_strings_with_escapes_and_commas() -> None:
    header = r'Bearer error_description="a \"quoted\", comma", scope="x"'
    assert bearer_challenge(header) == BearerChallenge(error_description='a "quoted", comma', scope="x")


@pytest.mark.parametrize(
    "header",
    ["", "   ", ",,", "Bearer", 'Bearer scope="unterminated', "Bearer =x", "Bearer scope=", '"quoted"'],
)
def test_garbled_or_empty_headers_do_not_raise(header: str) -> None:
    challenges = parse_challenges(header)
    bearer = bearer_challenge(header)
    assert bearer is None or bearer.resource_metadata is None
    assert all(isinstance(c, Challenge) for c in challenges)


def test_no_bearer_challenge() -> None:
    assert bearer_challenge('Basic realm="x"') is None
    assert bearer_challenge(None) is None


@given(st.text(max_size=80))
def test_any_text_parses_without_raising(header: str) -> None:
    parse_challenges(header)


@given(
    st.dictionaries(
        st.sampled_from(["scope", "resource_metadata", "error", "error_description", "realm"]),
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),
        min_size=1,
    )
)
def test_format_then_parse_round_trips(params: dict[str, str]) -> None:
    assert bearer_challenge(format_bearer_challenge(params)) == BearerChallenge(**params)


def test_format_leaves_out_none_and_refuses_control_characters() -> None:
    assert format_bearer_challenge(resource_metadata="https://x/y", scope=None) == (
        'Bearer resource_metadata="https://x/y"'
    )
    assert format_bearer_challenge() == "Bearer"
    with pytest.raises(ValueError, match="control"):
        format_bearer_challenge(error_description="line\r\nInjected: header")
    with pytest.raises(ValueError, match="parameter name"):
        format_bearer_challenge({"bad name": "x"})
