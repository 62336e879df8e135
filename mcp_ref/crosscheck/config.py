"""What the battery may call on the server under test: tools with a known behaviour.

Some checks need a tool that does something particular (works slowly so it
can be cancelled, reports progress, logs at every level...). The battery
never guesses which of a server's tools is safe to call: it calls the tools
named here, and a check whose tool is not named is skipped, saying so.

From the command line (``--slow-tool NAME``, ``--slow-tool 'NAME {"seconds": 5}'``)
or a TOML file (``--config FILE``); the top-level keys come before the first
table (after it, TOML makes them keys of that table)::

    timeout = 10            # seconds to wait for any one answer
    call_all_tools = false  # true: call every tool, not only the read-only ones (--call-all-tools)
    cancel_wait = 2         # seconds to watch for an answer after cancelling the slow tool

    [tools.slow]            # runs for a few seconds, ideally reporting progress
    name = "long_running"
    arguments = { seconds = 5 }

    [tools.progress]        # reports progress, then returns
    name = "progress_emitter"
    arguments = { count = 5 }

    [tools.logging]         # sends log messages at several levels
    name = "log_levels"

    [tools.task]            # supports task execution (execution.taskSupport)
    name = "count_slowly"
    arguments = { count = 2 }

    [tools.list_changed]    # changes the tool list (notifications/tools/list_changed)
    name = "toggle_tool"

    [[tools.call]]          # called, and its result judged (output schema, content)
    name = "add"
    arguments = { a = 1, b = 2 }
"""

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = ["ToolSpec", "CheckConfig", "ConfigError", "ROLES", "parse_tool_option", "load_config"]

#: the behaviours a check can ask for, and what each means
ROLES: Final = {
    "slow": "a tool that runs for a few seconds (the cancellation check cancels it)",
    "progress": "a tool that reports progress",
    "logging": "a tool that sends log messages at several levels",
    "task": "a tool that supports task execution",
    "list_changed": "a tool that changes the tool list",
}


class ConfigError(ValueError):
    """The options or the config file say something the battery cannot use."""


@attrs.frozen
class ToolSpec:
    name: str
    arguments: dict[str, Any] = attrs.Factory(dict)

    def describe(self) -> str:
        return f"{self.name} {json.dumps(self.arguments)}" if self.arguments else self.name


@attrs.frozen
class CheckConfig:
    tools: dict[str, ToolSpec] = attrs.Factory(dict)
    calls: tuple[ToolSpec, ...] = ()
    #: seconds to wait for any one answer
    timeout: float = 10.0
    #: seconds to watch for an answer after cancelling the slow tool (cancellation#4)
    cancel_wait: float = 2.0
    #: call every tool the server lists, read-only or not, with made-up arguments and with
    #: arguments its schema refuses (default: only the tools marked readOnlyHint, valid arguments)
    call_all_tools: bool = False
    #: the main session in every revision the server speaks, one report section each (False: its latest)
    all_revisions: bool = True

    def tool(self, role: str) -> ToolSpec | None:
        return self.tools.get(role)

    def merged(self, other: "CheckConfig") -> "CheckConfig":
        """``other`` (the command line) over ``self`` (the file)."""
        return CheckConfig(
            {**self.tools, **other.tools},
            self.calls + other.calls,
            other.timeout,
            self.cancel_wait,
            self.call_all_tools or other.call_all_tools,
            self.all_revisions and other.all_revisions,
        )


def parse_tool_option(text: str) -> ToolSpec:
    """``NAME`` or ``NAME {json arguments}``."""
    name, _, rest = text.strip().partition(" ")
    if not name:
        raise ConfigError("a tool option needs a tool name")
    arguments: Any = {}
    if rest.strip():
        try:
            arguments = json.loads(rest)
        except ValueError as e:
            raise ConfigError(f"the arguments of tool {name!r} are not JSON: {e}") from None
    if not isinstance(arguments, dict):
        raise ConfigError(f"the arguments of tool {name!r} must be a JSON object")
    return ToolSpec(name, arguments)


def _spec(where: str, value: Any) -> ToolSpec:
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        raise ConfigError(f"{where} needs a name (a string)")
    arguments = value.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise ConfigError(f"{where}.arguments must be a table")
    unknown = set(value) - {"name", "arguments"}
    if unknown:
        raise ConfigError(f"{where} has unknown keys {sorted(unknown)}")
    return ToolSpec(value["name"], dict(arguments))


def load_config(path: str | Path) -> CheckConfig:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    unknown = set(data) - {"tools", "timeout", "cancel_wait", "call_all_tools", "all_revisions"}
    if unknown:
        raise ConfigError(f"{path}: unknown sections {sorted(unknown)}")
    tools_table = data.get("tools", {})
    if not isinstance(tools_table, Mapping):
        raise ConfigError(f"{path}: [tools] must be a table")
    tools: dict[str, ToolSpec] = {}
    calls: list[ToolSpec] = []
    for role, value in tools_table.items():
        if role == "call":
            if not isinstance(value, list):
                raise ConfigError(f"{path}: tools.call is an array of tables ([[tools.call]])")
            calls += [_spec(f"tools.call[{i}]", v) for i, v in enumerate(value)]
        elif role in ROLES:
            tools[role] = _spec(f"tools.{role}", value)
        else:
            raise ConfigError(f"{path}: unknown tool role {role!r} (known: {', '.join([*ROLES, 'call'])})")
    seconds = {}
    for key, default in (("timeout", 10.0), ("cancel_wait", 2.0)):
        value = data.get(key, default)
        if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
            raise ConfigError(f"{path}: {key} must be a positive number of seconds")
        seconds[key] = float(value)
    call_all = data.get("call_all_tools", False)
    if not isinstance(call_all, bool):
        raise ConfigError(f"{path}: call_all_tools must be true or false")
    all_revisions = data.get("all_revisions", True)
    if not isinstance(all_revisions, bool):
        raise ConfigError(f"{path}: all_revisions must be true or false")
    return CheckConfig(tools, tuple(calls), seconds["timeout"], seconds["cancel_wait"], call_all, all_revisions)
