"""client/sampling: checking sampling/createMessage before the application sees it.

The application's handler gets the params and returns a
:class:`CreateMessageResult`; raising :class:`SamplingRejected` answers with
the spec's user-rejected error (-1). This is the human-in-the-loop hook: a
client shows the request, lets the user edit or deny it, and shows the result
before returning it (sampling#1, #2, #14).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import schema as model
from ..errors import ErrorCode, InvalidCallbackAnswer, MCPError, ProtocolError
from ..schema.content import ToolResultContent, ToolUseContent

if TYPE_CHECKING:
    from ..schema.sampling import CreateMessageRequestParams, CreateMessageResult, SamplingMessage

__all__ = [
    "SamplingHandler",
    "SamplingRejected",
    "check_sampling_request",
    "sampling_messages_problem",
    "sampling_result_problem",
    "tool_results_problem",
    "SamplingGuard",
]

# (names as strings: the sampling chapter of the model is loaded on first use)
SamplingHandler = Callable[[Any, "CreateMessageRequestParams"], Awaitable["CreateMessageResult"]]


class SamplingRejected(MCPError):
    """[client/sampling#13] the user rejected the request: code -1."""

    def __init__(self, message: str = "User rejected sampling request") -> None:
        super().__init__(ErrorCode.USER_REJECTED, message)


def _blocks(message: SamplingMessage | CreateMessageResult) -> list[Any]:
    return message.content if isinstance(message.content, list) else [message.content]


def sampling_messages_problem(params: CreateMessageRequestParams) -> str | None:
    """What breaks the tool use rules in ``params.messages``, or None.

    Checked by the client on receipt and by the server before sending.
    """
    pending: set[str] = set()
    for i, message in enumerate(params.messages):
        blocks = _blocks(message)
        results = [b for b in blocks if isinstance(b, ToolResultContent)]
        if results and len(results) != len(blocks):
            # [client/sampling#7, #19] a user message with tool results holds only tool results
            return f"messages[{i}] mixes tool results with other content"
        answered = {r.tool_use_id for r in results}
        if pending and (message.role != "user" or answered != pending):
            # [client/sampling#8, #19] every tool use is answered by the next (user) message
            return f"messages[{i}] must answer tool uses {sorted(pending)} with tool results"
        if answered and not pending:
            # [schema#33] a tool result answers a tool use of the message before it
            return f"messages[{i}] has tool results for {sorted(answered)}, which answer no preceding tool use"
        pending = {b.id for b in blocks if isinstance(b, ToolUseContent)}
    return None


def tool_results_problem(params: CreateMessageRequestParams) -> str | None:
    """A tool result whose ``structuredContent`` does not fit its tool's ``outputSchema``, or None.

    The tool is the one the answered tool use named, among ``params.tools``. Checked by the
    server before it sends (a SHOULD: the client does not refuse such a request). Without
    jsonschema (the ``validation`` extra) nothing is checked.
    """
    from ..basic.json_schema import compile_schema

    schemas = {t.name: t.output_schema for t in params.tools or () if t.output_schema is not None}
    if not schemas:
        return None
    named: dict[str, str] = {}  # tool use id -> tool name
    for i, message in enumerate(params.messages):
        for block in _blocks(message):
            if isinstance(block, ToolUseContent):
                named[block.id] = block.name
            elif isinstance(block, ToolResultContent) and block.structured_content is not None:
                schema = schemas.get(named.get(block.tool_use_id, ""))
                validate = compile_schema(schema) if schema is not None else None
                errors = validate(block.structured_content) if validate is not None else []
                # [schema#34] a tool result's structuredContent conforms to its tool's outputSchema
                if errors:
                    tool = named[block.tool_use_id]
                    return f"messages[{i}]: the structuredContent for {tool} does not fit its outputSchema: {errors[0]}"
    return None


def check_sampling_request(params: CreateMessageRequestParams, *, tools_declared: bool) -> None:
    """Raise ProtocolError(-32602) for a request the spec says we must refuse."""
    if (params.tools is not None or params.tool_choice is not None) and not tools_declared:
        # [client/sampling#3, #4, schema#25] tool use needs sampling.tools, which we did not declare
        raise ProtocolError(
            "Invalid params: tools were sent but sampling.tools was not declared", ErrorCode.INVALID_PARAMS
        )
    problem = sampling_messages_problem(params)
    # [client/sampling#15] the messages are checked on receipt -- sampling#security-considerations
    if problem is not None:
        raise ProtocolError(f"Invalid params: {problem}", ErrorCode.INVALID_PARAMS)


def sampling_result_problem(params: CreateMessageRequestParams, result: CreateMessageResult) -> str | None:
    """What in ``result`` ignores the request's ``toolChoice``, or None.

    Checked by the client before the answer leaves and by the server on receipt.
    """
    mode = params.tool_choice.mode if params.tool_choice is not None else None
    if mode not in ("required", "none"):
        return None
    used = any(isinstance(b, ToolUseContent) for b in _blocks(result))
    if mode == "required" and not used:
        # [client/sampling#9, schema#31] "required": the model uses at least one tool
        return 'toolChoice "required" but the result uses no tool'
    if mode == "none" and used:
        # [client/sampling#10, schema#32] "none": the model uses no tool
        return 'toolChoice "none" but the result uses a tool'
    return None


class SamplingGuard:
    """Wraps the application's handler with the checks above."""

    def __init__(self, handler: SamplingHandler, *, tools: bool = False, context: bool = False) -> None:
        self.handler = handler
        self.tools = tools
        self.context = context

    async def __call__(self, ctx: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        check_sampling_request(params, tools_declared=self.tools)
        # [client/sampling#1, #14] the application (its user) approves or rejects: SamplingRejected
        # is -1 to the server -- sampling#user-interaction-model
        result = await self.handler(ctx, params)
        problem = sampling_result_problem(params, result) if isinstance(result, model.CreateMessageResult) else None
        if problem is not None:
            # the application's handler broke the request's toolChoice: an internal error, not sent
            raise InvalidCallbackAnswer("sampling/createMessage", [problem])
        return result
