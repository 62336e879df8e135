"""server/utilities/caching (2026-07-28): the hints a cacheable result carries."""

import pytest

from mcp_ref.server.utilities.caching import CACHEABLE, NO_PROMISE, CachePolicy, check_cache_for, hints_for


@pytest.mark.req("2026-07-28:server/utilities/caching#11")
@pytest.mark.parametrize("bad", [-1, 1.5, "10", True])
def test_a_ttl_is_a_non_negative_integer(bad: object) -> None:
    with pytest.raises(ValueError):
        CachePolicy(ttl_ms=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CachePolicy(scope="shared")  # type: ignore[arg-type]


@pytest.mark.req("2026-07-28:server/utilities/caching#1")
def test_cacheable_results_get_hints_and_others_none() -> None:
    for method in CACHEABLE:
        assert hints_for(method, {}, default=NO_PROMISE, per_method={}) == {"ttlMs": 0, "cacheScope": "private"}
    assert hints_for("tools/call", {}, default=NO_PROMISE, per_method={}) == {}
    # interim results carry none
    assert hints_for("resources/read", {"resultType": "input_required"}, default=NO_PROMISE, per_method={}) == {}


@pytest.mark.req("2026-07-28:server/utilities/caching#24")
def test_resource_then_operation_then_server_and_the_results_own_fields_win() -> None:
    default, per = CachePolicy(10, "public"), {"tools/list": CachePolicy(20, "public")}
    assert hints_for("prompts/list", {}, default=default, per_method=per) == {"ttlMs": 10, "cacheScope": "public"}
    assert hints_for("tools/list", {}, default=default, per_method=per) == {"ttlMs": 20, "cacheScope": "public"}
    own = CachePolicy(5, "private")
    assert hints_for("tools/list", {}, default=default, per_method=per, override=own) == {
        "ttlMs": 5,
        "cacheScope": "private",
    }
    assert hints_for("tools/list", {"ttlMs": 1}, default=default, per_method=per) == {"cacheScope": "public"}


def test_policies_are_only_for_cacheable_operations() -> None:
    with pytest.raises(ValueError, match="tools/call"):
        check_cache_for({"tools/call": CachePolicy()})
    with pytest.raises(TypeError):
        check_cache_for({"tools/list": 5})  # type: ignore[dict-item]
