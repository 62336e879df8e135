"""basic/transports: how whole MCP messages travel between two peers.

Every transport gives the session the same thing, a
``trio.abc.Channel[bytes]`` of whole encoded JSON-RPC messages:

* ``await ch.send(msg)`` sends one message (compact UTF-8 JSON). A message
  containing "\\n" or "\\r" is refused with ValueError before anything is
  sent. ``trio.BrokenResourceError`` when the peer is gone,
  ``trio.ClosedResourceError`` after our own ``aclose()``. Concurrent sends
  never interleave.
* ``await ch.receive()`` returns one message; ``trio.EndOfChannel`` when
  the peer has finished; :class:`~mcp_ref.errors.MessageTooLarge` when a
  message over the limit was skipped (the channel stays usable). Bytes
  that are not valid JSON or UTF-8 are delivered as they are: answering
  them is the engine's job.
* ``await ch.aclose()``.
* optionally ``ch.send_nowait(msg)``: take the message at once or raise
  ``trio.WouldBlock`` without taking it (the in-memory channels have it);
  the session then writes without holding its lock across a schedule point.
* optionally, with ``send_nowait``, ``ch.notify_send_ready(callback) ->
  bool``: when it returns True, the channel calls ``callback()`` (at once, in
  whatever task is running) after a ``send_nowait`` raised ``trio.WouldBlock``
  as soon as one might succeed, and whenever either end is closed (so one
  might fail). The session then never awaits ``send()``: a write that finds
  no room waits in the session's own queue, first come first served, the
  callback sends the waiting writes in order, a request's timeout or the
  session's close takes a waiting write out with nothing sent, and neither a
  lock nor a cancel scope is needed (:func:`.memory.memory_channel_pair` with
  a buffer).

Modules: :mod:`.stdio` (framing, the server side on this process's
stdin/stdout, the client side launching a server process),
:mod:`.memory` (in-process pairs), :mod:`.streamable_http` and its
drivers. This package module imports none of them, so a sans-IO module
here stays importable without trio.
"""
