"""schema.ts "Autocomplete"."""

from typing import Literal

from attrs import field, frozen

from ._base import NEW_IN_2025_06_18, install_model_methods, since
from .jsonrpc import RequestId, RequestParams, Result

__all__ = [
    "PromptReference",
    "ResourceTemplateReference",
    "CompletionArgument",
    "CompletionContext",
    "CompleteRequestParams",
    "CompleteRequest",
    "Completion",
    "CompleteResult",
    "MAX_COMPLETION_VALUES",
]

#: at most this many values in one completion (server/utilities/completion)
MAX_COMPLETION_VALUES = 100


@frozen(kw_only=True, repr=False, eq=False)
class PromptReference:
    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class ResourceTemplateReference:
    """Named ``ResourceReference`` in 2025-03-26."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


@frozen(kw_only=True, repr=False, eq=False)
class CompletionArgument:
    name: str
    value: str


@frozen(kw_only=True, repr=False, eq=False)
@since("2025-06-18")
class CompletionContext:
    """Values of arguments already resolved."""

    arguments: dict[str, str] | None = None


@frozen(kw_only=True, repr=False, eq=False)
class CompleteRequestParams(RequestParams):
    ref: PromptReference | ResourceTemplateReference
    argument: CompletionArgument
    context: CompletionContext | None = field(default=None, metadata=NEW_IN_2025_06_18)


@frozen(kw_only=True, repr=False, eq=False)
class CompleteRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["completion/complete"] = "completion/complete"
    id: RequestId
    params: CompleteRequestParams


@frozen(kw_only=True, repr=False, eq=False)
class Completion:
    values: list[str]
    total: int | None = None
    has_more: bool | None = None


@frozen(kw_only=True, repr=False, eq=False)
class CompleteResult(Result):
    completion: Completion


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
