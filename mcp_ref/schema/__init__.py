"""The MCP data model: one attrs class per schema definition (see spec_notes/schema.md)."""

from .jsonrpc import *  # noqa: F403
from .cancellation import *  # noqa: F403
from .lifecycle import *  # noqa: F403
from .ping import *  # noqa: F403
from .progress import *  # noqa: F403
from .pagination import *  # noqa: F403
from .content import *  # noqa: F403
from .resources import *  # noqa: F403
from .prompts import *  # noqa: F403
from .tools import *  # noqa: F403
from .tasks import *  # noqa: F403
from .logging import *  # noqa: F403
from .sampling import *  # noqa: F403
from .completion import *  # noqa: F403
from .roots import *  # noqa: F403
from .elicitation import *  # noqa: F403
from .messages import *  # noqa: F403
from .legacy import *  # noqa: F403
from ._base import LATEST_PROTOCOL_VERSION, REVISIONS
from ._converter import decode, encode

from . import jsonrpc, cancellation, lifecycle, ping, progress, pagination, content, resources, prompts, tools, tasks, logging, sampling, completion, roots, elicitation, messages, legacy  # noqa: E402,F401

__all__ = ["LATEST_PROTOCOL_VERSION", "REVISIONS", "decode", "encode"]
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
