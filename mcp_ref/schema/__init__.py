"""The MCP data model: one attrs class per schema definition (see spec_notes/schema.md).

Everything public of every module is re-exported here; ``__all__`` is the
concatenation of the modules' ``__all__`` (tests/schema/test_exports.py).
"""

from . import (
    cancellation,
    completion,
    content,
    elicitation,
    jsonrpc,
    legacy,
    lifecycle,
    logging,
    messages,
    pagination,
    ping,
    progress,
    prompts,
    resources,
    roots,
    sampling,
    tasks,
    tools,
)
from ._base import JSONRPC_VERSION, LATEST_PROTOCOL_VERSION, REVISIONS, install_model_methods
from ._converter import converter_for, decode, encode
from .cancellation import *
from .completion import *
from .content import *
from .elicitation import *
from .jsonrpc import *
from .legacy import *
from .lifecycle import *
from .logging import *
from .messages import *
from .pagination import *
from .ping import *
from .progress import *
from .prompts import *
from .resources import *
from .roots import *
from .sampling import *
from .tasks import *
from .tools import *

__all__ = ["LATEST_PROTOCOL_VERSION", "REVISIONS", "JSONRPC_VERSION", "decode", "encode", "converter_for"]
__all__ += jsonrpc.__all__
__all__ += cancellation.__all__
__all__ += lifecycle.__all__
__all__ += ping.__all__
__all__ += progress.__all__
__all__ += pagination.__all__
__all__ += content.__all__
__all__ += resources.__all__
__all__ += prompts.__all__
__all__ += tools.__all__
__all__ += tasks.__all__
__all__ += logging.__all__
__all__ += sampling.__all__
__all__ += completion.__all__
__all__ += roots.__all__
__all__ += elicitation.__all__
__all__ += messages.__all__
__all__ += legacy.__all__

install_model_methods(globals())
