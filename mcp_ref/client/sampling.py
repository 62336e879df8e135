"""client/sampling: checking sampling/createMessage before the application sees it.

The application's handler gets the params and returns a
:class:`CreateMessageResult`; raising :class:`SamplingRejected` answers with
the spec's user-rejected error (-1). This is the human-in-the-loop hook: a
client shows the request, lets the user edit or deny it, and shows the result
before returning it (sampling#1, #2, #14).
"""

from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import ErrorCode, MCPError, ProtocolError
from ..schema.content import ToolResultContent, ToolUseContent
from ..schema.sampling import CreateMessageRequestParams, CreateMessageResult, SamplingMessage

__all__ = ["SamplingHandler", "SamplingRejected", "check_sampling_request", "SamplingGuard"]

SamplingHandler = Callable[[Any, CreateMessageRequestParams], Awaitable[CreateMessageResult]]


class SamplingRejected(MCPError):
    """[client/sampling#13] the user rejected the request: code -1."""

    def __init__(self, message: str = "User rejected sampling request") -> None:
        super().__init__(ErrorCode.USER_REJECTED, message)


def _blocks(message: SamplingMessage) -> list[Any]:
    return message.content if isinstance(message.content, list) else [message.content]


def check_sampling_request(params: CreateMessageRequestParams, *, tools_declared: bool) -> None:
    """Raise ProtocolError(-32602) for a request the spec says we must refuse."""
    if (params.tools is not None or params.tool_choice is not None) and not tools_declared:
        # [client/sampling#3, #4] tool use needs sampling.tools, which we did not declare
        raise ProtocolError(
            "Invalid params: tools were sent but sampling.tools was not declared", ErrorCode.INVALID_PARAMS
        )
    pending: set[str] = set()
    for i, message in enumerate(params.messages):
        blocks = _blocks(message)
        results = [b for b in blocks if isinstance(b, ToolResultContent)]
        if results and len(results) != len(blocks):
            # [client/sampling#7] a user message with tool results holds only tool results
            raise ProtocolError(
                f"Invalid params: messages[{i}] mixes tool results with other content", ErrorCode.INVALID_PARAMS
            )
        if pending:
            answered = {r.tool_use_id for r in results}
            if message.role != "user" or answered != pending:
                # [client/sampling#8] every tool use is answered by the next (user) message
                raise ProtocolError(
                    f"Invalid params: messages[{i}] must answer tool uses {sorted(pending)} with tool results",
                    ErrorCode.INVALID_PARAMS,
                )
            pending = set()
        uses = {b.id for b in blocks if isinstance(b, ToolUseContent)}
        if uses:
            pending = uses
    return None


class SamplingGuard:
    """Wraps the application's handler with the checks above."""

    def __init__(self, handler: SamplingHandler, *, tools: bool = False, context: bool = False) -> None:
        self.handler = handler
        self.tools = tools
        self.context = context

    async def __call__(self, ctx: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        check_sampling_request(params, tools_declared=self.tools)
        return await self.handler(ctx, params)
