"""Where an OAuth client keeps its tokens and client id between requests and runs.

:class:`TokenStorage` is the protocol (``load`` / ``save`` by key, the MCP
server's canonical URI); :class:`InMemoryTokenStorage` is the default,
:class:`FileTokenStorage` one JSON file readable by the user only, for
command-line clients (basic/authorization#76).
"""

import contextlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs
import trio

from ..authorization.metadata import ClientInformation
from ..authorization.tokens import Tokens

__all__ = ["StoredAuthorization", "TokenStorage", "InMemoryTokenStorage", "FileTokenStorage"]

log = logging.getLogger("mcp_ref.oauth")


@attrs.frozen(kw_only=True)
class StoredAuthorization:
    """What a client keeps about one MCP server: its tokens, its client id, the server's issuer."""

    tokens: Tokens | None = None
    client: ClientInformation | None = None
    #: the authorization server the tokens and client id belong to
    issuer: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.tokens is not None:
            out["tokens"] = self.tokens.to_json()
        if self.client is not None:
            out["client"] = self.client.to_json()
        if self.issuer is not None:
            out["issuer"] = self.issuer
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "StoredAuthorization":
        tokens, client, issuer = data.get("tokens"), data.get("client"), data.get("issuer")
        return cls(
            tokens=Tokens.from_json(tokens) if isinstance(tokens, dict) else None,
            client=ClientInformation.from_json(client) if isinstance(client, dict) else None,
            issuer=issuer if isinstance(issuer, str) else None,
        )


class TokenStorage(Protocol):
    """Where an :class:`OAuthClient` keeps what it obtained, by key (the MCP server's canonical URI).

    [basic/authorization#76] keep it where only the user can read it.
    """

    async def load(self, key: str) -> StoredAuthorization | None:
        """What was saved under ``key`` (the MCP server's canonical URI), or None."""

    async def save(self, key: str, value: StoredAuthorization | None) -> None:
        """Store ``value`` under ``key``; None forgets the key."""
        ...


class InMemoryTokenStorage:
    """The default storage: gone when the process ends."""

    def __init__(self) -> None:
        #: what is kept, by key
        self.items: dict[str, StoredAuthorization] = {}

    async def load(self, key: str) -> StoredAuthorization | None:
        """What was saved under ``key``, or None."""
        return self.items.get(key)

    async def save(self, key: str, value: StoredAuthorization | None) -> None:
        """Keep ``value`` under ``key`` (None forgets it) for the life of this object."""
        if value is None:
            self.items.pop(key, None)
        else:
            self.items[key] = value


class FileTokenStorage:
    """One JSON file of every server's authorization, readable by the user only (mode 0600).

    For command-line clients that should not make the user log in on every
    run. Each write replaces the file atomically (a temporary file created
    0600 in the same directory, then renamed); the directory is created
    0700 when missing. A file that cannot be read is treated as empty, with
    a warning (the user authorizes again).

    Several processes may share the file: each save reads, changes and
    replaces it holding an exclusive lock on ``<path>.lock`` (``flock``;
    ``msvcrt.locking`` on Windows), so no process writes over an entry
    another saved meanwhile. (Without it, two processes saving 200 entries
    each kept 250 of the 400.) Two processes saving the *same* key still
    settle on the last one's value.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        #: the JSON file the tokens are kept in
        self.path = Path(path).expanduser()
        self._lock = trio.Lock()

    async def load(self, key: str) -> StoredAuthorization | None:
        """What was saved under ``key``, or None (the file is read each time)."""
        data = await trio.to_thread.run_sync(self._read)
        item = data.get(key)
        if not isinstance(item, dict):
            return None
        try:
            return StoredAuthorization.from_json(item)
        except (ValueError, TypeError) as e:
            log.warning("%s: the entry for %s cannot be read (%s); ignored", self.path, key, e)
            return None

    async def save(self, key: str, value: StoredAuthorization | None) -> None:
        """Keep ``value`` under ``key`` (None forgets it), writing the file anew, readable by its owner only."""
        async with self._lock:
            await trio.to_thread.run_sync(self._update, key, value)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.warning("%s cannot be read (%s); starting without stored authorization", self.path, e)
            return {}
        return data if isinstance(data, dict) else {}

    def _update(self, key: str, value: StoredAuthorization | None) -> None:
        # [basic/authorization#76, 2026-07-28:basic/authorization/index#48] a directory made here is the
        # user's alone (refresh tokens are kept where only the user reads them)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # [basic/authorization#76] no save writes over another process's (issue 31, row 4)
        with _exclusive(self.path.with_name(self.path.name + ".lock")):
            self._replace(key, value)

    def _replace(self, key: str, value: StoredAuthorization | None) -> None:
        data = self._read()
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value.to_json()
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (created 0600), against other processes too; it is
    released when the block ends, or when the process dies (the system drops its locks)."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # (retries for 10 s, then OSError)
        else:
            import fcntl

            # [basic/authorization#76] held through the read-change-replace
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (closing releases the lock)
