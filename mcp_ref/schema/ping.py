"""schema.ts "Ping"."""

from typing import Literal

from attrs import frozen

from ._base import install_model_methods, until
from .jsonrpc import RequestId, RequestParams

__all__ = ["PingRequest"]


@frozen(kw_only=True, repr=False, eq=False)
@until("2026-07-28")
class PingRequest:
    jsonrpc: Literal["2.0"] = "2.0"
    method: Literal["ping"] = "ping"
    id: RequestId
    params: RequestParams | None = None


# the shared repr, eq and hash (see _base), however this module was imported
install_model_methods(globals())
