"""client/elicitation: form and URL mode, checked on both sides.

Client side: :class:`ElicitationGuard` wraps the application's handler. It
refuses modes the client did not declare (-32602, elicitation#34) and URL
elicitations without a valid URL (#13), and checks an ``accept`` answer
against the requested schema before it leaves (elicitation#56). The handler
gets the params as sent; :func:`form_defaults` gives the defaults to pre-fill
a form with (elicitation#11). URL-mode completions
(``notifications/elicitation/complete``) are matched to the URL elicitations
this session accepted or that a -32042 error listed (:func:`announced_ids`);
unknown ids are ignored (#17).

Server side: raise :class:`URLElicitationRequired` from a handler to answer
with the -32042 error carrying the URL elicitations to complete (#20-#23).
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from .. import schema as model
from ..basic.url_elicitation import announced_ids, check_elicitation_url, check_url
from ..errors import DecodeError, ErrorCode, InvalidAnswer, InvalidCallbackAnswer, MCPError, ProtocolError
from ..schema._converter import decode, encode
from ..schema.lifecycle import ElicitationCapability

if TYPE_CHECKING:
    from ..schema.elicitation import (
        ElicitationRequestedSchema,
        ElicitRequestFormParams,
        ElicitRequestURLParams,
        ElicitResult,
    )

__all__ = [
    "ElicitationHandler",
    "ElicitationGuard",
    "URLElicitationRequired",
    "received_error",
    "form_defaults",
    "validate_form_content",
    "check_url",
    "announced_ids",
    "check_elicit_answer",
    "asked_only",
    "revision_problem",
]

# (names as strings: the elicitation chapter of the model is loaded on first use)
ElicitationHandler = Callable[[Any, "ElicitRequestFormParams | ElicitRequestURLParams"], Awaitable["ElicitResult"]]

log = logging.getLogger(__name__)

#: URL elicitations a client keeps waiting for completion (the engine keeps as many -32042 ids)
MAX_PENDING_URLS = 1024

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


class URLElicitationRequired(MCPError):
    """[client/elicitation#20-#23] the request needs these URL elicitations completed first."""

    def __init__(
        self, elicitations: Iterable[ElicitRequestURLParams], message: str = "URL elicitation required"
    ) -> None:
        items = list(elicitations)
        if not items or not all(isinstance(e, model.ElicitRequestURLParams) for e in items):
            # [client/elicitation#22, #23] a non-empty list of URL-mode elicitations with ids
            raise ValueError("URLElicitationRequired needs at least one ElicitRequestURLParams")
        # [client/elicitation#33] -32042, listing what to complete -- elicitation#error-handling
        # (the error exists in 2025-11-25 only: 2026-07-28 retired -32042 with the ids it lists)
        data = {"elicitations": [encode(e, "2025-11-25") for e in items]}
        super().__init__(ErrorCode.URL_ELICITATION_REQUIRED, message, data)
        #: the URL elicitations the user must complete before the request can succeed
        self.elicitations = items


def received_error(code: int, message: str, data: Any) -> MCPError:
    """The exception for an error response we received: a well-formed -32042 becomes
    :class:`URLElicitationRequired` with its elicitations decoded (so the caller
    can open them); anything else, or a -32042 whose ``data`` does not decode,
    is a plain :class:`MCPError` carrying the peer's data as sent."""
    if code == ErrorCode.URL_ELICITATION_REQUIRED:
        try:
            items = decode(data, model.URLElicitationRequiredErrorData).elicitations
        except DecodeError:
            items = []
        if items:
            error = URLElicitationRequired(items, message)
            error.data = data  # the peer's data as sent, unknown members included
            return error
    return MCPError(code, message, data)


#: form constructs that do not exist before revision 2025-11-25 (they change the answer's shape)
#: (by class name: the elicitation chapter of the model is loaded on first use)
_NEW_IN_2025_11_25: dict[str, str] = {
    "TitledSingleSelectEnumSchema": "titled single-select enum (oneOf)",
    "UntitledMultiSelectEnumSchema": "multi-select enum (type array)",
    "TitledMultiSelectEnumSchema": "titled multi-select enum (type array)",
}


def revision_problem(schema: ElicitationRequestedSchema, revision: str) -> str | None:
    """What in a requested schema the negotiated ``revision`` does not have, if anything.

    [basic/lifecycle#14] a session keeps to its revision: a 2025-06-18 client
    cannot be asked a multi-select (its answer, a list, does not exist there),
    so the request is refused on receipt, naming the construct, rather than
    accepted and failing when the answer is encoded.
    """
    if revision >= "2025-11-25":
        return None
    for name, prop in schema.properties.items():
        construct = _NEW_IN_2025_11_25.get(type(prop).__name__)
        if construct is not None:
            return f"property {name!r} is a {construct}, which protocol revision {revision} does not have"
    return None


def form_defaults(schema: ElicitationRequestedSchema) -> dict[str, Any]:
    """[client/elicitation#11] the default of every property that has one."""
    return {name: prop.default for name, prop in schema.properties.items() if prop.default is not None}


def _check_value(name: str, prop: Any, value: Any) -> str | None:
    if isinstance(prop, model.StringSchema):
        if type(value) is not str:
            return f"{name}: expected a string"
        if prop.min_length is not None and len(value) < prop.min_length:
            return f"{name}: shorter than {prop.min_length}"
        if prop.max_length is not None and len(value) > prop.max_length:
            return f"{name}: longer than {prop.max_length}"
        fmt = {"email": _EMAIL, "date": _DATE, "date-time": _DATETIME}.get(prop.format or "")
        if fmt is not None and not fmt.fullmatch(value):
            return f"{name}: not a valid {prop.format}"
        if prop.format == "uri":
            try:
                check_url(value)
            except ValueError:
                return f"{name}: not a valid uri"
        return None
    if isinstance(prop, model.NumberSchema):
        if type(value) not in (int, float) or (prop.type == "integer" and type(value) is not int):
            return f"{name}: expected {'an integer' if prop.type == 'integer' else 'a number'}"
        if prop.minimum is not None and value < prop.minimum:
            return f"{name}: below {prop.minimum}"
        if prop.maximum is not None and value > prop.maximum:
            return f"{name}: above {prop.maximum}"
        return None
    if isinstance(prop, model.BooleanSchema):
        return None if type(value) is bool else f"{name}: expected a boolean"
    if isinstance(prop, model.UntitledSingleSelectEnumSchema | model.LegacyTitledEnumSchema):
        return None if value in prop.enum else f"{name}: not one of {prop.enum}"
    if isinstance(prop, model.TitledSingleSelectEnumSchema):
        allowed = [o.const for o in prop.one_of]
        return None if value in allowed else f"{name}: not one of {allowed}"
    if isinstance(prop, model.UntitledMultiSelectEnumSchema | model.TitledMultiSelectEnumSchema):
        if type(value) is not list or any(type(v) is not str for v in value):
            return f"{name}: expected a list of strings"
        allowed = (
            prop.items.enum
            if isinstance(prop, model.UntitledMultiSelectEnumSchema)
            else [o.const for o in prop.items.any_of]
        )
        bad = [v for v in value if v not in allowed]
        if bad:
            return f"{name}: {bad} not in {allowed}"
        if prop.min_items is not None and len(value) < prop.min_items:
            return f"{name}: fewer than {prop.min_items} items"
        if prop.max_items is not None and len(value) > prop.max_items:
            return f"{name}: more than {prop.max_items} items"
        return None
    return f"{name}: unsupported property schema"


def validate_form_content(schema: ElicitationRequestedSchema, content: dict[str, Any]) -> list[str]:
    """[client/elicitation#56, #57] what is wrong with submitted form data (empty if nothing).

    A field the form did not ask for is not a fault here (the requested schema does not close
    the object): :func:`asked_only` takes it out before the answer is used.
    """
    problems = [f"{name}: required" for name in schema.required or () if name not in content]
    for name, value in content.items():
        prop = schema.properties.get(name)
        if prop is None:
            continue
        problem = _check_value(name, prop, value)
        if problem:
            problems.append(problem)
    return problems


def asked_only(schema: ElicitationRequestedSchema, result: ElicitResult) -> tuple[ElicitResult, list[str]]:
    """``result`` with only the fields the form asked for, and the names of those left out.

    The same rule on both sides and in both eras (spec_notes/client/elicitation.md): the
    client sends nothing the user was not asked for, and a server's handler sees only what
    it asked for, whoever answered.
    """
    content = result.content
    unasked = [name for name in content or () if name not in schema.properties]
    if not unasked or content is None:
        return result, []
    kept = {name: value for name, value in content.items() if name in schema.properties}
    return attrs.evolve(result, content=kept), unasked


def check_elicit_answer(params: Any, result: Any) -> Any:
    """[client/elicitation#57] server side: an accepted form answer must fit the schema we asked with.

    Returns the answer with only the fields the form asked for (others are ignored, see
    :func:`asked_only`); raises :class:`InvalidAnswer` (a RemoteProtocolError, -32602) listing the problems.
    Other answers (decline, cancel, URL mode, a task) are returned as they are.
    """
    if not isinstance(params, model.ElicitRequestFormParams) or not isinstance(result, model.ElicitResult):
        return result
    if result.action != "accept":
        return result
    # [client/elicitation#57] the handler sees only the fields it asked for, whoever answered
    result, unasked = asked_only(params.requested_schema, result)
    if unasked:
        log.info("elicitation answer: fields the form did not ask for are ignored: %s", unasked)
    problems = validate_form_content(params.requested_schema, dict(result.content or {}))
    if problems:
        # [client/elicitation#57] an answer that does not fit reaches the handler as InvalidAnswer in
        # both eras (a RemoteProtocolError), never as data
        raise InvalidAnswer(
            "the client's elicitation answer does not match the requested schema: " + "; ".join(problems),
            ErrorCode.INVALID_PARAMS,
            {"problems": problems},
        )
    return result


class ElicitationGuard:
    """Wraps the application's handler with the checks of this chapter."""

    def __init__(self, handler: ElicitationHandler, *, form: bool = True, url: bool = False) -> None:
        if not (form or url):
            # [client/elicitation#5] at least one mode
            raise ValueError("an elicitation handler supports form mode, URL mode, or both")
        self.handler = handler
        self.form = form
        self.url = url
        #: URL elicitations accepted (or being asked) and not completed yet (elicitationId -> params);
        #: the oldest are forgotten past MAX_PENDING_URLS, so a server never completing costs bounded memory
        self.pending_urls: OrderedDict[str, ElicitRequestURLParams] = OrderedDict()

    def capability(self) -> ElicitationCapability:
        # [client/elicitation#4] declared with the modes we support
        return ElicitationCapability(form={} if self.form else None, url={} if self.url else None)

    async def __call__(self, ctx: Any, params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
        if isinstance(params, model.ElicitRequestURLParams):
            if not self.url:
                # [client/elicitation#34] a mode we did not declare: invalid params
                raise ProtocolError("Invalid params: URL mode elicitation is not supported", ErrorCode.INVALID_PARAMS)
            try:
                check_elicitation_url(params.url)
            except ValueError as e:
                raise ProtocolError(f"Invalid params: {e}", ErrorCode.INVALID_PARAMS) from e
            eid = params.elicitation_id
            if eid is not None:  # (2025-11-25: a completion notification may name it; 2026-07-28 has no id)
                self.pending_urls[eid] = params
                self.pending_urls.move_to_end(eid)
            while len(self.pending_urls) > MAX_PENDING_URLS:
                self.pending_urls.popitem(last=False)
            accepted = False
            try:
                result = await self.handler(ctx, params)
                accepted = result.action == "accept"
                return result
            finally:
                if not accepted and eid is not None:
                    # declined, cancelled or failed: no completion will follow
                    self.pending_urls.pop(eid, None)
        # [client/elicitation#9] no mode means form mode
        if not self.form:
            raise ProtocolError("Invalid params: form mode elicitation is not supported", ErrorCode.INVALID_PARAMS)
        connection = getattr(getattr(ctx, "session", None), "connection", None)
        if connection is not None:
            problem = revision_problem(params.requested_schema, connection.revision)
            if problem is not None:
                # [basic/lifecycle#14] not in the negotiated revision: invalid params, the handler never sees it
                raise ProtocolError(f"Invalid params: requestedSchema: {problem}", ErrorCode.INVALID_PARAMS)
        result = await self.handler(ctx, params)
        if result.action == "accept":
            # [client/elicitation#56] nothing leaves the client that the form did not ask for
            result, unasked = asked_only(params.requested_schema, result)
            if unasked:
                log.warning("elicitation answer: fields the form did not ask for are not sent: %s", unasked)
            problems = validate_form_content(params.requested_schema, dict(result.content or {}))
            if problems:
                # [client/elicitation#56] the answer is checked against the form before it leaves:
                # one that does not fit is never sent (spec_notes/client/elicitation.md)
                raise InvalidCallbackAnswer("elicitation/create", problems)
        elif result.content is not None:
            problem = f"content is only sent with action 'accept', not {result.action!r}"
            raise InvalidCallbackAnswer("elicitation/create", [problem])
        return result

    def complete(self, elicitation_id: str) -> ElicitRequestURLParams | None:
        """[client/elicitation#14, #17] the completed elicitation, or None for an unknown id (ignored)."""
        return self.pending_urls.pop(elicitation_id, None)
