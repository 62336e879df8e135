"""Official extensions of the Model Context Protocol (``io.modelcontextprotocol/...``).

* :mod:`mcp_ref.ext.tasks`: ``io.modelcontextprotocol/tasks``, tasks for 2026-07-28 requests.
"""
