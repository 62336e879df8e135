"""Every JSON example that 2026-07-28's schema.ts includes (``examples/<Definition>/*.json``)
decodes as that definition and re-encodes for 2026-07-28 to exactly the same JSON.

The folder names the definition; mcp_ref's class or alias of that name decodes
it (a union picks its member). Where an example carries something its own
definition does not have, the difference is listed with the reason and checked
to be exactly that.
"""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcp_ref.errors import LocalProtocolError
from mcp_ref.schema import decode

from ..conftest import find_spec, spec_path
from ._spec import encode, our_object

REVISION = "2026-07-28"


def _examples() -> list[tuple[str, str]]:
    root = find_spec(REVISION, "examples")
    if root is None:  # the spec is not here: the test skips, saying why (spec_path)
        return [("", "")]
    return sorted((d.name, f.name) for d in root.iterdir() if d.is_dir() for f in d.glob("*.json"))


def _load(definition: str, name: str) -> Any:
    path: Path = spec_path(REVISION, "examples", definition, name)
    return json.loads(path.read_text())


#: (definition, file) -> (the keys the example has beyond its definition, why)
BEYOND_THE_SCHEMA: dict[tuple[str, str], tuple[set[str], str]] = {
    ("ListRootsRequest", "list-roots-request.json"): (
        {"id"},
        "an InputRequest has no JSON-RPC envelope in 2026-07-28 (schema.ts: method and params), yet the example"
        " keeps the id of the 2025 request; mcp_ref writes the 2026-07-28 shape",
    ),
}


#: (definition, file) -> (the required member the example lacks, where): decoding takes
#: it (tolerant), encoding for the revision refuses to write the message without it
LACKING: dict[tuple[str, str], tuple[str, str]] = {
    ("ReadResourceResultResponse", "read-resource-result-response.json"): (
        "ReadResourceResult.ttlMs",
        "CacheableResult makes ttlMs and cacheScope required; this example (unlike its -with-ttl sibling) has neither",
    ),
}


@pytest.mark.req("2026-07-28:schema#16")
@pytest.mark.parametrize(("definition", "name"), _examples())
def test_each_example_round_trips(definition: str, name: str) -> None:
    value = _load(definition, name)
    tp = our_object(REVISION, definition)
    decoded = decode(value, tp)
    if (definition, name) in LACKING:
        missing, _ = LACKING[(definition, name)]
        with pytest.raises(LocalProtocolError, match=re.escape(f"{missing} is required in protocol revision")):
            encode(decoded, REVISION)
        return
    again = encode(decoded, REVISION, as_type=tp)
    beyond, _ = BEYOND_THE_SCHEMA.get((definition, name), (set(), ""))
    expected = {k: v for k, v in value.items() if k not in beyond} if isinstance(value, dict) else value
    assert again == expected
    if beyond:
        assert set(value) - set(again) == beyond


def test_the_listed_differences_are_examples() -> None:
    present = set(_examples())
    assert set(BEYOND_THE_SCHEMA) | set(LACKING) <= present


def test_every_definition_with_examples_is_covered() -> None:
    # the examples name definitions: each folder is a definition of the revision's schema.json
    from ._spec import defs

    assert {d for d, _ in _examples()} <= set(defs(REVISION))
