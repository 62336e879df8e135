"""The requirements the cross-checker judges: :mod:`mcp_ref.basic.requirements`.

The table lives with the base protocol, so the engine's events carry the
same ids and levels as the cross-checker's findings.
"""

from ..basic.requirements import (
    MUST_LEVELS,
    RULES,
    SHOULD_LEVELS,
    Rule,
    chapter_of,
    is_must,
    is_should,
    level_of,
    rule,
)

__all__ = ["Rule", "RULES", "rule", "level_of", "chapter_of", "is_must", "is_should", "MUST_LEVELS", "SHOULD_LEVELS"]
