"""Reading an HTTP answer on a raw connection, for the tests that write their requests by hand
(odd framing, several exchanges on one connection, what the server does after it answers)."""

import h11
import trio


async def read_response(conn: h11.Connection, stream: trio.abc.ReceiveStream) -> tuple[int, dict[str, str], bytes]:
    """The answer to the request ``conn`` sent, read from ``stream`` to its end: its status,
    headers (names in lower case) and body. The connection is left as it is, for the caller to
    see what comes after the answer (the server's EOF, or the next exchange)."""
    status, headers, chunks = 0, {}, []
    with trio.fail_after(10):
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(bytes(await stream.receive_some(65536)))
            elif isinstance(event, h11.Response):
                status = event.status_code
                headers = {k.decode().lower(): v.decode() for k, v in event.headers}
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                return status, headers, b"".join(chunks)
