"""Chapters of the data model are loaded on first use (bench W7): a tools-only server
and its client never build the classes of the chapters they do not use, and every
name still resolves when it is read."""

import subprocess
import sys
import textwrap

import mcp_ref.schema as S
from mcp_ref.schema import messages

#: chapters a tools-only session has no use for
UNUSED = {"completion", "elicitation", "legacy", "prompts", "resources", "roots", "sampling"}


def _chapters_loaded(code: str) -> set[str]:
    """The schema chapters in sys.modules after ``code`` ran in a fresh interpreter."""
    script = textwrap.dedent(code) + textwrap.dedent(
        """
        import sys
        print(" ".join(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("mcp_ref.schema.")))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_mcp_ref_loads_no_chapter_it_does_not_use() -> None:
    loaded = _chapters_loaded("import mcp_ref")
    assert {"jsonrpc", "lifecycle", "tools"} <= loaded
    assert not loaded & UNUSED


def test_a_tools_only_session_loads_no_chapter_it_does_not_use() -> None:
    loaded = _chapters_loaded(
        """
        import trio
        import mcp_ref
        from mcp_ref.testing import memory_session_pair

        server = mcp_ref.Server("lazy", "1.0")

        @server.tool(input_schema={"type": "object"})
        async def echo(ctx, arguments):
            return "ok"

        async def main():
            async with memory_session_pair(server) as client:
                assert (await client.call_tool("echo", {})).content[0].text == "ok"
                await client.list_tools()

        trio.run(main)
        """
    )
    assert {"tools", "content"} <= loaded
    assert not loaded & UNUSED


def test_reading_a_name_loads_its_chapter() -> None:
    loaded = _chapters_loaded("import mcp_ref.schema as S; S.ElicitResult; S.Prompt")
    assert {"elicitation", "prompts"} <= loaded
    assert "sampling" not in loaded


def test_the_method_tables_load_a_chapter_on_lookup_and_see_every_method() -> None:
    assert messages.CLIENT_REQUESTS["prompts/get"] is S.GetPromptRequest
    assert messages.SERVER_REQUESTS["sampling/createMessage"] is S.CreateMessageRequest
    assert messages.CLIENT_REQUESTS["no/such/method"] is None
    assert messages.CLIENT_REQUESTS.get("no/such/method", 1) == 1
    assert messages.CLIENT_REQUESTS.get("tools/call") is S.CallToolRequest
    assert "elicitation/create" in messages.SERVER_REQUESTS
    assert "elicitation/create" not in messages.CLIENT_REQUESTS
    assert len(messages.SERVER_REQUESTS) == len(list(messages.SERVER_REQUESTS)) == 8
    assert messages.PARAMS_TYPES["elicitation/create"] == S.ElicitRequestParams
    assert messages.RESULT_TYPES["ping"] is S.Result
    assert "notifications/progress" not in messages.RESULT_TYPES
    assert messages.method_since("elicitation/create") == "2025-06-18"
    assert S.CreateMessageRequest in messages.ServerRequest.__args__
