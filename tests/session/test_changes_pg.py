"""The change feed replicas share through PostgreSQL (LISTEN/NOTIFY), on a real server."""

import uuid
from typing import Any

import pytest
import trio

pytest.importorskip("psycopg", reason="the postgres extra (psycopg 3) is not installed")

from mcp_ref.session.changes import FeedClosed
from mcp_ref.session.changes_pg import MAX_PAYLOAD, open_postgres_change_feed
from mcp_ref.testing.postgres import PostgresServer


async def test_a_change_published_on_one_replica_reaches_every_replica_once(postgres: PostgresServer) -> None:
    channel = "c_" + uuid.uuid4().hex[:10]
    async with (
        open_postgres_change_feed(postgres.conninfo, channel=channel) as one,
        open_postgres_change_feed(postgres.conninfo, channel=channel) as two,
        one.subscribe() as on_one,
        two.subscribe() as on_two,
    ):
        one.publish("notifications/tools/list_changed")
        one.publish("notifications/resources/updated", {"uri": "test://x"})
        big = {"uri": "test://big", "padding": "x" * MAX_PAYLOAD}
        two.publish("notifications/resources/updated", big)
        expected: list[Any] = [
            ("notifications/tools/list_changed", None),
            ("notifications/resources/updated", {"uri": "test://x"}),
            # too big for a notification: sent without its params ("look again")
            ("notifications/resources/updated", None),
        ]
        for changes in (on_one, on_two):
            got = []
            with trio.fail_after(10):
                async for change in changes:
                    got.append(change)
                    if len(got) == 3:
                        break
            # (in each publisher's order; two publishers' changes interleave as the database saw them)
            assert sorted(got, key=repr) == sorted(expected, key=repr)
            assert got.index(expected[0]) < got.index(expected[1])
        # once each: nothing more comes
        with trio.move_on_after(0.5):
            extra = await on_two.__anext__()
            raise AssertionError(f"a change came twice: {extra!r}")
        # another channel hears nothing of these
        async with (
            open_postgres_change_feed(postgres.conninfo, channel=channel + "x") as other,
            other.subscribe() as elsewhere,
        ):
            one.publish("notifications/prompts/list_changed")
            with trio.move_on_after(0.5):
                raise AssertionError(f"heard on another channel: {await elsewhere.__anext__()!r}")


async def test_closing_the_feed_ends_its_subscriptions_gracefully(postgres: PostgresServer) -> None:
    async with open_postgres_change_feed(postgres.conninfo, channel="c_close") as feed, feed.subscribe() as changes:
        assert feed.subscribers == 1
        feed.close("bye")
        with pytest.raises(FeedClosed) as closed:
            await changes.__anext__()
        assert closed.value.graceful and closed.value.reason == "bye"
        feed.publish("notifications/tools/list_changed")  # (after close: dropped, no error)


async def test_a_database_that_cannot_be_reached_is_a_clear_error() -> None:
    with pytest.raises(ConnectionError):
        async with open_postgres_change_feed("host=127.0.0.1 port=1 user=nobody dbname=none", connect_timeout=1):
            raise AssertionError("opened without a database")
