"""Cross-checking other MCP implementations against mcp_ref.

* :class:`Observer` judges one connection from the outside, both directions
  (sans-IO, like the engine it is built on);
* :func:`check_server` runs the active battery of ``mcp-ref check``;
* :func:`judge_traffic` judges recorded traffic (``mcp-ref judge``);
* :class:`Report` holds the findings and checks, and writes text, JSON and JUnit.

Every finding names a requirement of spec_notes/requirements.toml and its level.
"""

from .observer import Direction, Observer
from .report import Check, Finding, Report
from .rules import RULES, Rule

__all__ = ["Direction", "Observer", "Check", "Finding", "Report", "RULES", "Rule"]
