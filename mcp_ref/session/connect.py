"""``connect(target)``: one opener for every transport, as the official SDKs have.

A thin front over the typed openers, which stay the place where each
transport's behaviour lives (revision detection included):

==============================================  ============================================
``connect("http://127.0.0.1:8000/mcp")``        :func:`~mcp_ref.open_http_client` (Streamable
                                                HTTP, falling back to HTTP+SSE for servers of
                                                2024-11-05)
``connect(["python", "server.py"])``            :func:`~mcp_ref.open_stdio_client` (a command
``connect("python server.py")``                 and its arguments, or one command line split as
                                                a shell would; a ``.py`` file alone runs with
                                                this interpreter)
``connect(server)``                             a :class:`~mcp_ref.Server` of this process,
                                                served in memory
                                                (:func:`~mcp_ref.memory_session_pair`)
==============================================  ============================================
"""

from __future__ import annotations

import inspect
import shlex
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .client import ClientSession, open_session, open_stdio_client

if TYPE_CHECKING:
    from .server import Server

__all__ = ["connect"]


def _own_options(opener: Callable[..., Any]) -> frozenset[str]:
    """The keywords ``opener`` takes itself, before passing the rest to open_session."""
    return frozenset(
        name for name, p in inspect.signature(opener).parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
    )


@asynccontextmanager
async def connect(target: str | Sequence[str] | Server, **options: Any) -> AsyncIterator[ClientSession]:
    """An initialised :class:`~mcp_ref.ClientSession` with ``target``, whatever its transport.

    ``target`` is an ``http://`` or ``https://`` URL (Streamable HTTP, with
    the fallback to the 2024-11-05 HTTP+SSE transport on: ``legacy_fallback=False``
    turns it off), a command (a list of its words, or one string split as a shell
    would; a lone ``.py`` file runs with this Python), or a :class:`~mcp_ref.Server`
    object (served in this process, in memory).

    ``options`` are those of the opener it stands for: :func:`~mcp_ref.open_http_client`
    (``auth=``, ``ssl_context=``, ``headers=`` ...), :func:`~mcp_ref.open_stdio_client`
    (``env=``, ``cwd=``, ``stderr=`` ...) or :func:`~mcp_ref.testing.memory_session_pair`,
    and those of :func:`~mcp_ref.open_session` every opener takes (``elicitation=``,
    ``sampling=``, ``roots=``, ``config=`` ...). An option the target's transport
    has no use for (``ssl_context=`` with a command) is a TypeError before anything
    is started.

    ::

        async with mcp_ref.connect("http://127.0.0.1:8000/mcp") as client:
            print(await client.list_tools())
    """
    from ..testing import memory_session_pair
    from .server import Server

    if isinstance(target, Server):
        _check(options, memory_session_pair, "a Server object (served in memory)")
        async with memory_session_pair(target, **options) as client:
            yield client
        return
    if isinstance(target, str) and urlsplit(target).scheme in ("http", "https"):
        from .http import open_http_client

        _check(options, open_http_client, "a URL")
        options.setdefault("legacy_fallback", True)
        async with open_http_client(target, **options) as client:
            yield client
        return
    command = _command(target)
    _check(options, open_stdio_client, "a command")
    async with open_stdio_client(command[0], command[1:], **options) as client:
        yield client


def _command(target: str | Sequence[str]) -> list[str]:
    if isinstance(target, str):
        if "://" in target:
            raise ValueError(f"connect({target!r}): an MCP server's URL is http:// or https://")
        words = shlex.split(target)
    elif isinstance(target, Sequence) and all(isinstance(word, str) for word in target):
        words = list(target)
    else:
        raise TypeError(f"connect() takes a URL, a command or a Server, not {type(target).__name__}")
    if not words:
        raise ValueError("connect(): the command is empty")
    if len(words) >= 1 and words[0].endswith(".py"):
        words = [sys.executable, *words]  # a script alone: run with this interpreter
    return words


#: the keywords open_session takes, which every opener passes on
_SESSION_OPTIONS = _own_options(open_session)


def _check(options: dict[str, Any], opener: Callable[..., Any], what: str) -> None:
    own = _own_options(opener)
    unknown = sorted(set(options) - own - _SESSION_OPTIONS)
    if unknown:
        raise TypeError(
            f"connect(): {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not an option for {what} "
            f"(see {opener.__name__} and open_session)"
        )
