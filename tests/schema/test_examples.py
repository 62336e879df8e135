"""Every JSON example in the 2025-11-25 prose decodes into the right type and
re-encodes to exactly the same JSON.

Whole JSON-RPC messages are typed through the method tables: requests and
notifications by ``method``, responses by the method of the request they
answer (the latest earlier request in the same page with the same id).
Fragments (a capability object, a content block, a tool, ...) are typed by
:data:`FRAGMENTS`. Blocks written as JSON with ``//`` comments are read with
the comments removed; blocks that are not JSON at all, or not MCP values, are
listed with the reason.
"""

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from mcp_ref.errors import DecodeError
from mcp_ref.schema import decode
from mcp_ref.schema.completion import PromptReference
from mcp_ref.schema.content import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_ref.schema.elicitation import (
    BooleanSchema,
    ElicitResult,
    NumberSchema,
    PrimitiveSchemaDefinition,
    StringSchema,
    TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema,
    UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
    URLElicitationRequiredError,
)
from mcp_ref.schema.jsonrpc import JSONRPCErrorResponse, JSONRPCRequest, JSONRPCResultResponse, Result
from mcp_ref.schema.lifecycle import ClientCapabilities, ServerCapabilities
from mcp_ref.schema.messages import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    RESULT_TYPES,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
)
from mcp_ref.schema.resources import Resource
from mcp_ref.schema.roots import Root
from mcp_ref.schema.sampling import ModelPreferences, SamplingMessage, SamplingMessageContentBlock
from mcp_ref.schema.tasks import CreateTaskResult, GetTaskResult, RelatedTaskMetadata, TaskAugmentedRequestParams
from mcp_ref.schema.tools import Tool

from ._spec import encode, json_blocks

Key = tuple[str, int]  # (page, ordinal of the block within the page)

#: blocks that cannot be read as JSON even without comments
UNPARSEABLE: dict[Key, str] = {
    ("server/utilities/pagination.mdx", 1): 'elides the list with "[...]"',
}

#: blocks that are JSON but not MCP values
NOT_MCP: dict[Key, str] = {
    ("basic/authorization.mdx", 1): "OAuth client ID metadata document",
    ("basic/authorization.mdx", 2): "OAuth authorization server metadata",
}


def _caps(cls: type) -> Callable[[Any], tuple[Any, Any]]:
    # {"capabilities": {...}}: the capabilities part of initialize
    def pick(block: Any) -> tuple[Any, Any]:
        assert list(block) == ["capabilities"]
        return cls, block["capabilities"]

    return pick


def _whole(tp: Any, expect: type | None = None) -> Callable[[Any], tuple[Any, Any]]:
    def pick(block: Any) -> tuple[Any, Any]:
        return (tp, expect), block

    return pick


def _tool_input_schema(block: Any) -> tuple[Any, Any]:
    # a JSON Schema shown on its own: the inputSchema of a tool
    return Tool, {"name": "example", "inputSchema": block}


def _related_task(block: Any) -> tuple[Any, Any]:
    # a _meta fragment holding the related-task key
    assert list(block) == ["io.modelcontextprotocol/related-task"]
    return RelatedTaskMetadata, block["io.modelcontextprotocol/related-task"]


#: fragments (no "jsonrpc" key) -> how to type them
FRAGMENTS: dict[Key, Callable[[Any], tuple[Any, Any]]] = {
    ("basic/index.mdx", 1): _tool_input_schema,
    ("basic/index.mdx", 2): _tool_input_schema,
    ("basic/utilities/tasks.mdx", 1): _caps(ServerCapabilities),
    ("basic/utilities/tasks.mdx", 2): _caps(ClientCapabilities),
    ("basic/utilities/tasks.mdx", 14): _whole(TaskAugmentedRequestParams),
    ("basic/utilities/tasks.mdx", 15): _related_task,
    ("client/elicitation.mdx", 1): _caps(ClientCapabilities),
    ("client/elicitation.mdx", 2): _caps(ClientCapabilities),
    ("client/elicitation.mdx", 3): _whole(PrimitiveSchemaDefinition, StringSchema),
    ("client/elicitation.mdx", 4): _whole(PrimitiveSchemaDefinition, NumberSchema),
    ("client/elicitation.mdx", 5): _whole(PrimitiveSchemaDefinition, BooleanSchema),
    ("client/elicitation.mdx", 6): _whole(PrimitiveSchemaDefinition, UntitledSingleSelectEnumSchema),
    ("client/elicitation.mdx", 7): _whole(PrimitiveSchemaDefinition, TitledSingleSelectEnumSchema),
    ("client/elicitation.mdx", 8): _whole(PrimitiveSchemaDefinition, UntitledMultiSelectEnumSchema),
    ("client/elicitation.mdx", 9): _whole(PrimitiveSchemaDefinition, TitledMultiSelectEnumSchema),
    ("client/roots.mdx", 1): _caps(ClientCapabilities),
    ("client/roots.mdx", 5): _whole(Root),
    ("client/roots.mdx", 6): _whole(list[Root]),
    ("client/sampling.mdx", 1): _caps(ClientCapabilities),
    ("client/sampling.mdx", 2): _caps(ClientCapabilities),
    ("client/sampling.mdx", 3): _caps(ClientCapabilities),
    ("client/sampling.mdx", 10): _whole(SamplingMessage),
    ("client/sampling.mdx", 11): _whole(SamplingMessage),
    ("client/sampling.mdx", 12): _whole(SamplingMessage),
    ("client/sampling.mdx", 13): _whole(SamplingMessageContentBlock, TextContent),
    ("client/sampling.mdx", 14): _whole(SamplingMessageContentBlock, ImageContent),
    ("client/sampling.mdx", 15): _whole(SamplingMessageContentBlock, AudioContent),
    ("client/sampling.mdx", 16): _whole(ModelPreferences),
    ("server/prompts.mdx", 1): _caps(ServerCapabilities),
    ("server/prompts.mdx", 7): _whole(ContentBlock, TextContent),
    ("server/prompts.mdx", 8): _whole(ContentBlock, ImageContent),
    ("server/prompts.mdx", 9): _whole(ContentBlock, AudioContent),
    ("server/prompts.mdx", 10): _whole(ContentBlock, EmbeddedResource),
    ("server/resources.mdx", 1): _caps(ServerCapabilities),
    ("server/resources.mdx", 2): _caps(ServerCapabilities),
    ("server/resources.mdx", 3): _caps(ServerCapabilities),
    ("server/resources.mdx", 4): _caps(ServerCapabilities),
    ("server/resources.mdx", 14): _whole(TextResourceContents | BlobResourceContents, TextResourceContents),
    ("server/resources.mdx", 15): _whole(TextResourceContents | BlobResourceContents, BlobResourceContents),
    ("server/resources.mdx", 16): _whole(Resource),
    ("server/tools.mdx", 1): _caps(ServerCapabilities),
    ("server/tools.mdx", 7): _whole(ContentBlock, TextContent),
    ("server/tools.mdx", 8): _whole(ContentBlock, ImageContent),
    ("server/tools.mdx", 9): _whole(ContentBlock, AudioContent),
    ("server/tools.mdx", 10): _whole(ContentBlock, ResourceLink),
    ("server/tools.mdx", 11): _whole(ContentBlock, EmbeddedResource),
    ("server/tools.mdx", 12): _whole(Tool),
    ("server/tools.mdx", 14): _whole(Tool),
    ("server/tools.mdx", 15): _whole(Tool),
    ("server/tools.mdx", 16): _whole(Tool),
    ("server/utilities/completion.mdx", 1): _caps(ServerCapabilities),
    ("server/utilities/logging.mdx", 1): _caps(ServerCapabilities),
}

#: examples that disagree with schema.ts: the key at this path is not part of
#: the type there, so decoding drops it (closed type) -- spec_notes/schema.md
PROSE_VS_SCHEMA: dict[Key, tuple[tuple[str, ...], str]] = {
    ("server/tools.mdx", 11): (
        ("resource", "annotations"),
        "annotations are shown inside the resource contents; schema.ts has them on EmbeddedResource",
    ),
}

#: responses whose request is not the latest one with that id in the page
RESPONSE_TYPES: dict[Key, type] = {
    # "Task with execution error": a tasks/get answer, shown after the page's
    # tasks/result example that used the same id
    ("basic/utilities/tasks.mdx", 20): GetTaskResult,
}


def strip_comments(text: str) -> str:
    """Remove ``//`` comments that are outside JSON strings."""
    out, i, in_string = [], 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def canonical(value: Any) -> str:
    """JSON text that tells 1 from 1.0 and true from 1, keys sorted."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def read_block(key: Key, text: str) -> tuple[Any, bool] | None:
    """(value, had comments), or None when the block is listed as unparseable."""
    try:
        return json.loads(text), False
    except json.JSONDecodeError:
        pass
    try:
        # JSON with comments, as several examples are written (and, once a
        # comment goes, the trailing comma it leaves)
        return json.loads(re.sub(r",(\s*[}\]])", r"\1", strip_comments(text))), True
    except json.JSONDecodeError:
        assert key in UNPARSEABLE, f"{key} is not JSON (even without comments) and not listed"
        return None


def _requests_table(method: str) -> Any:
    return CLIENT_REQUESTS.get(method) or SERVER_REQUESTS.get(method)


def check_round_trip(tp: Any, value: Any, expect: type | None = None) -> Any:
    decoded = decode(value, tp)
    if expect is not None:
        assert type(decoded) is expect, f"decoded as {type(decoded).__name__}, expected {expect.__name__}"
    assert canonical(encode(decoded)) == canonical(value)
    return decoded


def check_page_blocks() -> dict[str, int]:
    """Check every block; returns counts per kind."""
    counts = {"message": 0, "fragment": 0, "jsonc": 0, "not-mcp": 0, "unparseable": 0}
    seen_requests: dict[tuple[str, Any], tuple[str, bool]] = {}  # (page, id) -> (method, task)
    for page, n, _line, text in json_blocks():
        key = (page, n)
        read = read_block(key, text)
        if read is None:
            counts["unparseable"] += 1
            continue
        value, had_comments = read
        counts["jsonc"] += had_comments
        if key in NOT_MCP:
            counts["not-mcp"] += 1
            continue
        if isinstance(value, dict) and "jsonrpc" in value:
            _check_message(key, value, seen_requests)
            counts["message"] += 1
            continue
        assert key in FRAGMENTS, f"{key}: a fragment with no type in FRAGMENTS: {text[:80]!r}"
        tp, part = FRAGMENTS[key](value)
        expect = None
        if isinstance(tp, tuple):
            tp, expect = tp
        if key in PROSE_VS_SCHEMA:
            path, _why = PROSE_VS_SCHEMA[key]
            decoded = decode(part, tp)
            part = _without(part, path)
            assert canonical(encode(decoded)) == canonical(part)
        else:
            check_round_trip(tp, part, expect)
        counts["fragment"] += 1
    unused = (set(FRAGMENTS) | set(NOT_MCP) | set(UNPARSEABLE) | set(RESPONSE_TYPES) | set(PROSE_VS_SCHEMA)) - {
        (p, n) for p, n, _, _ in json_blocks()
    }
    assert not unused, f"listed blocks that do not exist: {unused}"
    return counts


def _without(value: Any, path: tuple[str, ...]) -> Any:
    """A copy of ``value`` without the key at ``path`` (which must be there)."""
    out = json.loads(json.dumps(value))
    node = out
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return out


def _only_fitting_result(key: Key, result: Any, methods: set[str]) -> type:
    fitting = set()
    for method in methods:
        tp = RESULT_TYPES[method]
        if tp is Result:
            continue  # an empty result fits anything
        try:
            decoded: Any = decode(result, tp)
        except DecodeError:
            continue
        if canonical(encode(decoded)) == canonical(result):
            fitting.add(tp)
    assert len(fitting) == 1, f"{key}: no single result type of {sorted(methods)} fits: {fitting}"
    return fitting.pop()


def _check_message(key: Key, value: dict[str, Any], seen: dict[tuple[str, Any], tuple[str, bool]]) -> None:
    page = key[0]
    if "method" in value:
        method = value["method"]
        if "id" in value:
            cls = _requests_table(method) or JSONRPCRequest  # progress.mdx uses "some_method"
            message = check_round_trip(cls, value)
            task = getattr(getattr(message, "params", None), "task", None) is not None
            seen[(page, value["id"])] = (method, task)
        else:
            cls = CLIENT_NOTIFICATIONS.get(method) or SERVER_NOTIFICATIONS.get(method)
            assert cls is not None, f"{key}: unknown notification {method}"
            check_round_trip(cls, value)
        return
    if "error" in value:
        code = value["error"].get("code")
        check_round_trip(URLElicitationRequiredError if code == -32042 else JSONRPCErrorResponse, value)
        return
    assert "result" in value, f"{key}: neither request, notification nor response"
    result_type = RESPONSE_TYPES.get(key)
    if result_type is None and (page, value["id"]) in seen:
        method, task = seen[(page, value["id"])]
        result_type = CreateTaskResult if task else RESULT_TYPES[method]
    if result_type is None:
        # No request with that id on the page: the result types of the
        # page's requests, of which exactly one must fit.
        result_type = _only_fitting_result(key, value["result"], {m for (p, _), (m, _) in seen.items() if p == page})
    result = check_round_trip(result_type, value["result"])
    envelope = decode(value, JSONRPCResultResponse)
    assert canonical(encode(JSONRPCResultResponse(id=envelope.id, result=result))) == canonical(value)


def test_every_json_example_decodes_and_round_trips() -> None:
    counts = check_page_blocks()
    checked = counts["message"] + counts["fragment"]
    print(f"spec examples: {checked} checked ({counts}), of {len(json_blocks())} blocks")
    assert checked >= 125


def test_elicitation_example_numbers_stay_numbers() -> None:
    # client/elicitation.mdx's form answer carries "age": 30; the model keeps
    # it an integer (and would keep 30.5 a float: spec_notes/schema.md)
    result = decode({"action": "accept", "content": {"age": 30, "ratio": 30.5}}, ElicitResult)
    assert result.content == {"age": 30, "ratio": 30.5}
    assert canonical(encode(result)) == canonical({"action": "accept", "content": {"age": 30, "ratio": 30.5}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1} // c', '{"a": 1} '),
        ('{"a": "x // y"}', '{"a": "x // y"}'),
        ('{"a": "q\\" // x"} // tail', '{"a": "q\\" // x"} '),
    ],
)
def test_comment_stripping_keeps_strings(text: str, expected: str) -> None:
    assert strip_comments(text) == expected


def test_a_prompt_reference_example_keeps_its_type() -> None:
    # completion.mdx refers to prompts by {"type": "ref/prompt", "name": ...}
    ref = decode({"type": "ref/prompt", "name": "code_review"}, PromptReference)
    assert encode(ref) == {"type": "ref/prompt", "name": "code_review"}
