"""server/utilities/completion: completion/complete for prompts and templates.

The completion values come from completers registered with a prompt argument
or a template variable. The answer holds at most 100 values
(``MAX_COMPLETION_VALUES``); ``total`` is the number of candidates and
``hasMore`` says some were cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import schema as model
from ..prompts import PromptRegistry
from ..resources import ResourceRegistry

if TYPE_CHECKING:
    from ...schema.completion import (
        CompleteRequestParams,
        CompleteResult,
    )

__all__ = ["CompletionHandler", "completion_result"]


def completion_result(values: list[str]) -> CompleteResult:
    """At most 100 values, with the total and whether more exist."""
    if any(type(v) is not str for v in values):
        raise TypeError("completion values are strings")
    # [server/utilities/completion#3, #5] at most 100 values; the rest only counted -- completion#security
    shown = values[: model.MAX_COMPLETION_VALUES]
    return model.CompleteResult(
        completion=model.Completion(values=shown, total=len(values), has_more=len(values) > len(shown))
    )


class CompletionHandler:
    """Routes completion/complete to the prompt or template that owns the argument."""

    def __init__(self, prompts: PromptRegistry, resources: ResourceRegistry) -> None:
        self.prompts = prompts
        self.resources = resources

    async def complete(self, ctx: Any, params: CompleteRequestParams) -> CompleteResult:
        ref = params.ref
        name, value = params.argument.name, params.argument.value
        context = dict(params.context.arguments or {}) if params.context is not None else {}
        if isinstance(ref, model.PromptReference):
            values = await self.prompts.complete(ctx, ref.name, name, value, context)
        else:
            assert isinstance(ref, model.ResourceTemplateReference)
            values = await self.resources.complete(ctx, ref.uri, name, value, context)
        return completion_result(list(values))
