"""basic/patterns/subscriptions (2026-07-28), sans-IO: filters, agreement, tags."""

import pytest

from mcp_ref.basic.patterns import subscriptions as s

CAPS = {"tools": {"listChanged": True}, "prompts": {}, "resources": {"subscribe": True}}


def test_the_filter_is_read_and_checked() -> None:
    got = s.read_filter({"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["a", "a", "b"], "x": 1}})
    assert got == {"toolsListChanged": True, "resourceSubscriptions": ["a", "b"]}
    for bad in ({}, {"notifications": []}, {"notifications": {"toolsListChanged": "yes"}}):
        with pytest.raises(ValueError):
            s.read_filter(bad)
    with pytest.raises(ValueError):
        s.read_filter({"notifications": {"resourceSubscriptions": [1]}})


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#2")
def test_the_agreement_keeps_what_the_server_offers() -> None:
    requested = {
        "toolsListChanged": True,
        "promptsListChanged": True,  # prompts without listChanged: not offered
        "resourcesListChanged": False,
        "resourceSubscriptions": ["file:///a"],
    }
    assert s.agreed_filter(requested, CAPS) == {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    assert s.agreed_filter(requested, {}) == {}


@pytest.mark.req("2026-07-28:basic/patterns/subscriptions#1")
def test_only_what_was_asked_for_goes_out() -> None:
    agreed = {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
    assert s.wants(agreed, "notifications/tools/list_changed", None)
    assert not s.wants(agreed, "notifications/prompts/list_changed", None)
    assert s.wants(agreed, "notifications/resources/updated", {"uri": "file:///a"})
    assert not s.wants(agreed, "notifications/resources/updated", {"uri": "file:///b"})
    assert not s.wants(agreed, "notifications/message", {"level": "info"})


@pytest.mark.req("2026-07-28:basic/index#61")
def test_notifications_carry_the_subscription_id() -> None:
    assert s.tag({"uri": "u", "_meta": {"k": 1}}, 7) == {
        "uri": "u",
        "_meta": {"k": 1, "io.modelcontextprotocol/subscriptionId": 7},
    }
    assert s.tag(None, "x") == {"_meta": {"io.modelcontextprotocol/subscriptionId": "x"}}
