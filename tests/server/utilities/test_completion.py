"""server/utilities/completion: prompt arguments and template variables, with context."""

import pytest

from mcp_ref.errors import ErrorCode, LocalProtocolError, MCPError
from mcp_ref.schema.completion import PromptReference, ResourceTemplateReference
from mcp_ref.schema.prompts import PromptArgument
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair

LANGUAGES = ["python", "pyret", "perl", "php", "rust"]


async def complete_language(ctx: RequestContext, value: str, context: dict[str, str]) -> list[str]:
    return [lang for lang in LANGUAGES if lang.startswith(value)]


async def complete_many(ctx: RequestContext, value: str, context: dict[str, str]) -> list[str]:
    prefix = context.get("owner", "")
    return [f"{prefix}{value}{i}" for i in range(250)]


def completion_server() -> Server:
    server = Server("complete")

    @server.prompt(
        arguments=[PromptArgument(name="language", required=True)], completers={"language": complete_language}
    )
    async def review(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return f"Review this {arguments['language']} code"

    @server.resource_template("repo://{owner}/{name}", completers={"name": complete_many})
    async def repo(ctx: RequestContext, uri: str, variables: dict[str, str]) -> str:
        return uri

    return server


@pytest.mark.req("server/utilities/completion#1", "server/utilities/completion#3")
async def test_prompt_argument_completion() -> None:
    async with memory_session_pair(completion_server(), era="legacy") as client:
        assert client.server_capabilities.completions == {}
        result = await client.complete(PromptReference(name="review"), "language", "py")
        assert result.completion.values == ["python", "pyret"]
        assert result.completion.total == 2 and result.completion.has_more is False


@pytest.mark.req("server/utilities/completion#5")
async def test_template_completion_with_context_is_capped_at_100() -> None:
    async with memory_session_pair(completion_server(), era="legacy") as client:
        ref = ResourceTemplateReference(uri="repo://{owner}/{name}")
        result = await client.complete(ref, "name", "x", context={"owner": "me-"})
        assert len(result.completion.values) == 100 and result.completion.values[0] == "me-x0"
        assert result.completion.total == 250 and result.completion.has_more is True


@pytest.mark.req("server/utilities/completion#2")
async def test_errors() -> None:
    async with memory_session_pair(completion_server(), era="legacy") as client:
        for ref, arg in (
            (PromptReference(name="nope"), "language"),
            (PromptReference(name="review"), "nope"),
            (ResourceTemplateReference(uri="repo://{x}"), "name"),
        ):
            with pytest.raises(MCPError) as info:
                await client.complete(ref, arg, "")
            assert info.value.code == ErrorCode.INVALID_PARAMS
    async with memory_session_pair(Server("none"), era="legacy") as client:
        with pytest.raises(LocalProtocolError):  # no completions capability: refused before sending
            await client.complete(PromptReference(name="x"), "a", "")
