"""schema.ts "Multi Round-Trip" (2026-07-28, basic/patterns/mrtr): a server that needs
more from the client answers with an :class:`InputRequiredResult`; the client
retries the request with the answers.

``InputRequest`` values are the sampling, roots and elicitation requests without
a JSON-RPC envelope (``{method, params}``: in 2026-07-28 these are no longer
requests a server sends, only questions inside a result); the same classes
serve the 2025 sessions, where they are whole JSON-RPC requests. Their answers
(``InputResponse``) are the results of those requests, told apart by shape.

The params that carry the answers back (``inputResponses``, ``requestState``)
are fields of ``CallToolRequestParams``, ``GetPromptRequestParams`` and
``ReadResourceRequestParams`` (schema.ts puts :class:`InputResponseRequestParams`
under each of them); their ``input_responses`` is decoded as
:data:`InputResponses` (see ``_base.lazy_type``: this chapter loads only when a
request carries answers).
"""

from typing import Any, Literal

from attrs import field, frozen

from ._base import (
    NEW_IN_2026_07_28,
    FieldValueError,
    discriminate,
    install_model_methods,
    since,
)
from .elicitation import ElicitRequest, ElicitResult
from .jsonrpc import (
    InputResponsesField,
    RequestParams,
    Result,
)
from .roots import ListRootsRequest, ListRootsResult
from .sampling import CreateMessageRequest, CreateMessageResult

__all__ = [
    "InputRequest",
    "InputResponse",
    "InputRequests",
    "InputResponses",
    "INPUT_RESPONSE_TYPES",
    "InputRequiredResult",
    "InputResponseRequestParams",
    "input_response_type",
]

#: what a server may ask of the client inside an InputRequiredResult
InputRequest = CreateMessageRequest | ListRootsRequest | ElicitRequest
#: the client's answer to one InputRequest: the result of that request
InputResponse = CreateMessageResult | ListRootsResult | ElicitResult
#: server-chosen key -> what it asks
InputRequests = dict[str, InputRequest]
#: the same keys -> the client's answers
InputResponses = dict[str, InputResponse]

#: method of an InputRequest -> the result class that answers it
INPUT_RESPONSE_TYPES: dict[str, type] = {
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
    "elicitation/create": ElicitResult,
}


def input_response_type(method: str) -> type:
    """The result class that answers an InputRequest of ``method`` (KeyError for others)."""
    return INPUT_RESPONSE_TYPES[method]


def _input_response_kind(value: dict[str, Any]) -> type | None:
    """An answer has no tag: each kind has a required member the others lack."""
    if "action" in value:
        return ElicitResult
    if "roots" in value:
        return ListRootsResult
    if "model" in value or "role" in value or "content" in value:
        return CreateMessageResult
    return None


discriminate(InputResponse, _input_response_kind)


def _one_or_the_other(instance: Any, attribute: Any, value: Any) -> None:
    # [2026-07-28:schema#21] inputRequests or requestState, at least one -- schema#inputrequiredresult
    if instance.input_requests is None and instance.request_state is None:
        raise FieldValueError("inputRequests", "an InputRequiredResult carries inputRequests or requestState")


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class InputRequiredResult(Result):
    """The request cannot complete yet: answer ``input_requests`` (if any) and retry it,
    passing ``request_state`` back unchanged (opaque to the client)."""

    result_type: Literal["input_required"] = "input_required"
    input_requests: InputRequests | None = None
    request_state: str | None = field(default=None, validator=_one_or_the_other)


@frozen(kw_only=True, repr=False, eq=False)
@since("2026-07-28")
class InputResponseRequestParams(RequestParams):
    """Params of a retried request: the answers, keyed as the server asked, and the state."""

    input_responses: InputResponsesField | None = field(default=None, metadata=NEW_IN_2026_07_28)
    request_state: str | None = field(default=None, metadata=NEW_IN_2026_07_28)


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
