"""server/prompts: listing, argument checks, every content kind, list_changed."""

from typing import Any

import pytest
import trio

from mcp_ref.errors import ErrorCode, MCPError
from mcp_ref.schema.content import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from mcp_ref.schema.prompts import GetPromptResult, PromptArgument, PromptMessage
from mcp_ref.server.prompts import as_get_prompt_result
from mcp_ref.session import RequestContext, Server
from mcp_ref.testing import memory_session_pair


def prompt_server() -> Server:
    server = Server("prompts")

    @server.prompt(description="A simple prompt")
    async def simple(ctx: RequestContext, arguments: dict[str, str]) -> str:
        return "Say hello"

    @server.prompt(
        arguments=[PromptArgument(name="topic", required=True), PromptArgument(name="style", description="tone")],
    )
    async def with_args(ctx: RequestContext, arguments: dict[str, str]) -> list[PromptMessage]:
        style = arguments.get("style", "plain")
        return [PromptMessage(role="user", content=TextContent(text=f"Write about {arguments['topic']} ({style})"))]

    @server.prompt()
    async def rich(ctx: RequestContext, arguments: dict[str, str]) -> GetPromptResult:
        return GetPromptResult(
            description="every content kind",
            messages=[
                PromptMessage(role="user", content=ImageContent(data="iVBORw0KGgo=", mime_type="image/png")),
                PromptMessage(role="user", content=AudioContent(data="UklGRg==", mime_type="audio/wav")),
                PromptMessage(
                    role="assistant",
                    content=EmbeddedResource(
                        resource=TextResourceContents(uri="test://doc", mime_type="text/plain", text="d")
                    ),
                ),
            ],
        )

    return server


@pytest.mark.req("server/prompts#1", "server/prompts#8")
async def test_capability_and_listing() -> None:
    async with memory_session_pair(prompt_server()) as client:
        assert client.server_capabilities.prompts is not None
        prompts = {p.name: p for p in await client.list_all_prompts()}
        assert set(prompts) == {"simple", "with_args", "rich"}
        assert prompts["simple"].description == "A simple prompt"
        assert [a.name for a in prompts["with_args"].arguments or []] == ["topic", "style"]


@pytest.mark.req("server/prompts#3", "server/prompts#4", "server/prompts#5")
async def test_get_with_every_content_kind() -> None:
    async with memory_session_pair(prompt_server()) as client:
        result = await client.get_prompt("simple")
        assert result.messages == [PromptMessage(role="user", content=TextContent(text="Say hello"))]
        result = await client.get_prompt("with_args", {"topic": "trio", "style": "terse"})
        assert result.messages[0].content == TextContent(text="Write about trio (terse)")
        rich = await client.get_prompt("rich")
        kinds = [type(m.content) for m in rich.messages]
        assert kinds == [ImageContent, AudioContent, EmbeddedResource]


@pytest.mark.req("server/prompts#6", "server/prompts#7", "server/prompts#10")
async def test_argument_checks() -> None:
    async with memory_session_pair(prompt_server()) as client:
        for name, args in (("nope", None), ("with_args", {}), ("with_args", {"topic": "x", "extra": "y"})):
            with pytest.raises(MCPError) as info:
                await client.get_prompt(name, args)
            assert info.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.req("server/prompts#2", "server/prompts#9")
async def test_list_changed() -> None:
    server = prompt_server()
    got = trio.Event()

    async def on_list_changed(kind: str) -> None:
        assert kind == "prompts"
        got.set()

    async with memory_session_pair(server, on_list_changed=on_list_changed):
        server.prompts.remove("simple")
        with trio.fail_after(5):
            await got.wait()


@pytest.mark.req("server/prompts#3", "server/prompts#4")
def test_image_and_audio_must_be_base64_with_a_mime_type() -> None:
    good = [
        PromptMessage(role="user", content=ImageContent(data="iVBORw0KGgo=", mime_type="image/png")),
        PromptMessage(role="user", content=AudioContent(data="UklGRg==", mime_type="audio/wav; rate=8000")),
    ]
    assert as_get_prompt_result(good, None).messages == good
    for content, problem in (
        (ImageContent(data="not base64!!", mime_type="image/png"), "messages[1]: image data is not valid base64"),
        (AudioContent(data="abc", mime_type="audio/wav"), "messages[1]: audio data is not valid base64"),
        (ImageContent(data="iVBORw0KGgo=", mime_type="png"), "messages[1]: 'png' is not a valid MIME type"),
        (AudioContent(data="UklGRg==", mime_type="audio wav/x"), "is not a valid MIME type"),
    ):
        with pytest.raises(ValueError) as info:
            as_get_prompt_result([good[0], PromptMessage(role="user", content=content)], None)
        assert problem in str(info.value)


@pytest.mark.req("server/prompts#5")
def test_an_embedded_resource_needs_a_valid_uri_a_mime_type_and_text_or_base64() -> None:
    def embedded(**fields: Any) -> PromptMessage:
        uri = fields.pop("uri", "file:///notes.md")
        mime = fields.pop("mime_type", "text/markdown")
        if "blob" in fields:
            contents: Any = BlobResourceContents(uri=uri, mime_type=mime, blob=fields["blob"])
        else:
            contents = TextResourceContents(uri=uri, mime_type=mime, text="# notes")
        return PromptMessage(role="user", content=EmbeddedResource(resource=contents))

    good = [embedded(), embedded(uri="test://doc", mime_type="application/pdf", blob="JVBERi0=")]
    assert as_get_prompt_result(good, None).messages == good
    for bad, problem in (
        (embedded(uri="notes.md"), "URI 'notes.md' is not a valid URI"),
        (embedded(uri="file:///a b.md"), "is not a valid URI"),
        (embedded(uri=""), "is not a valid URI"),
        (embedded(mime_type=None), "needs a valid mimeType, not None"),
        (embedded(mime_type="markdown"), "needs a valid mimeType, not 'markdown'"),
        (embedded(blob="not base64!!"), "blob is not valid base64"),
    ):
        with pytest.raises(ValueError) as info:
            as_get_prompt_result([good[0], bad], None)
        assert problem in str(info.value) and "messages[1]" in str(info.value)


async def test_a_prompt_with_bad_media_is_an_internal_error() -> None:
    server = Server("bad media")

    @server.prompt()
    async def broken(ctx: RequestContext, arguments: dict[str, str]) -> list[PromptMessage]:
        return [PromptMessage(role="user", content=ImageContent(data="not base64!!", mime_type="image/png"))]

    async with memory_session_pair(server) as client:
        with pytest.raises(MCPError) as info:
            await client.get_prompt("broken")
        assert info.value.code == ErrorCode.INTERNAL_ERROR
        await client.ping()


SYSTEM: Any = "system"  # a role the annotation forbids, as an untyped caller passes it


async def test_a_prompt_message_with_a_system_role_is_refused() -> None:
    with pytest.raises(ValueError, match="messages\\[0\\]: role is 'user' or 'assistant', not 'system'"):
        as_get_prompt_result([PromptMessage(role=SYSTEM, content=TextContent(text="x"))], None)
    server = Server("s")

    @server.prompt()
    async def system(ctx: RequestContext, arguments: dict[str, str]) -> list[PromptMessage]:
        return [PromptMessage(role=SYSTEM, content=TextContent(text="x"))]

    async with memory_session_pair(server) as client:
        with pytest.raises(MCPError) as info:
            await client.get_prompt("system")
        assert info.value.code == ErrorCode.INTERNAL_ERROR
