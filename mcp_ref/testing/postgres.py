"""A real, throwaway PostgreSQL server for tests and benchmarks (of a PostgresTaskStore).

:func:`start_postgres` runs ``initdb`` in a fresh directory and starts the
server on a free loopback port; :meth:`PostgresServer.close` stops it and
removes everything. It needs the PostgreSQL server binaries (Debian:
``apt-get install postgresql``); as root, ``initdb`` and ``pg_ctl`` refuse to
run, so they run as the ``postgres`` user (``runuser``).
"""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import attrs


def postgres_bin() -> Path | None:
    """The directory of initdb and pg_ctl: the newest Debian cluster version, else the PATH's."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@attrs.define
class PostgresServer:
    """A running PostgreSQL: ``conninfo`` to reach it, ``stop()`` and ``start()`` to take it away and back."""

    bin: Path
    base: Path
    port: int
    as_postgres: list[str]
    durable: bool = False

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def conninfo(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self.as_postgres, str(self.bin / "pg_ctl"), "-D", str(self.data), *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.base}"
            " -c max_connections=200"
        )
        if not self.durable:
            options += " -c fsync=off"  # (commits reach the OS at once: a killed server loses none)
        self._ctl("-l", str(self.base / "log"), "-w", "-t", "60", "-o", options, "start")

    def stop(self) -> None:
        """Take the database away at once (as a crash or a network cut would)."""
        self._ctl("-m", "immediate", "-w", "stop")

    def new_table(self) -> str:
        """A table name no test has used."""
        return "t_" + uuid.uuid4().hex[:16]

    def close(self) -> None:
        """Stop the server (if it runs) and remove its files."""
        try:
            self._ctl("-m", "immediate", "-w", "stop")
        except subprocess.CalledProcessError:
            pass  # it was not running (a test took it away): nothing to stop
        shutil.rmtree(self.base, ignore_errors=True)


class PostgresNotInstalled(RuntimeError):
    """No initdb / pg_ctl on this machine."""


def start_postgres(*, durable: bool = False) -> PostgresServer:
    """A new PostgreSQL server; ``durable``: with fsync (for honest benchmarks), else without
    (tests take servers of theirs away, never the database's machine)."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise PostgresNotInstalled("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    base = Path(tempfile.mkdtemp(prefix="mcp-ref-pg-"))
    as_postgres: list[str] = []
    if os.geteuid() == 0:
        # initdb and pg_ctl refuse to run as root
        shutil.chown(base, "postgres", "postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    server = PostgresServer(bin_dir, base, free_port(), as_postgres, durable)
    subprocess.run(
        [*as_postgres, str(bin_dir / "initdb"), "-D", str(server.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        server.start()
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    return server
