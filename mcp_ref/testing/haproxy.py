"""A real HAProxy in front of replicas, for tests and benchmarks (Debian: ``apt-get install haproxy``).

:func:`haproxy_config` is the configuration the README's "Running several
replicas" shows: round robin over the replicas, with 2025-11-25 sessions kept
on the replica that created them (a stick table keyed on ``Mcp-Session-Id``,
learnt from the response to ``initialize``), the replica's name in an
``X-MCP-Replica`` response header (what the tests check), and requests to a
replica that is down retried on another one. :func:`start_haproxy` runs it on a
loopback port; :meth:`HAProxy.close` stops it.
"""

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from .postgres import free_port

__all__ = ["HAProxy", "HAProxyNotInstalled", "haproxy_config", "start_haproxy"]


class HAProxyNotInstalled(RuntimeError):
    """No ``haproxy`` binary (Debian: ``apt-get install haproxy``)."""


def haproxy_config(
    port: int, backends: list[tuple[str, int]], *, host: str = "127.0.0.1", threads: int | None = None
) -> str:
    """The configuration of a load balancer on ``host:port`` over ``backends`` (name, port on ``host``).

    ``threads``: HAProxy's threads (``nbthread``); by default one per CPU, right for a host of its
    own (a benchmark that shares a small machine with the replicas gives it one).
    """
    servers = "\n".join(f"    server {name} {host}:{p} check inter 500 fall 2 rise 1" for name, p in backends)
    nbthread = "" if threads is None else f"    nbthread {threads}\n"
    return f"""\
global
    maxconn 4096
{nbthread}
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # a replica that is down: the request goes to another (2026-07-28 requests are stateless)
    retries 2
    option redispatch

frontend mcp
    bind {host}:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    # 2025-11-25 sessions live in the replica that answered initialize: keep them there
    stick-table type string len 128 size 100k expire 1h
    stick store-response res.hdr(mcp-session-id)
    stick match req.hdr(mcp-session-id)
    http-response set-header X-MCP-Replica %[srv_name]
{servers}
"""


@attrs.define
class HAProxy:
    """A running HAProxy: ``url`` of its MCP endpoint."""

    process: subprocess.Popen[bytes]
    port: int
    base: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def start_haproxy(backends: list[tuple[str, int]], *, port: int | None = None, threads: int | None = None) -> HAProxy:
    """HAProxy on a free loopback port over ``backends`` (name, loopback port), ready to accept
    (``threads``: see :func:`haproxy_config`)."""
    binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if binary is None:
        raise HAProxyNotInstalled("haproxy is not installed (Debian: apt-get install haproxy)")
    port = port or free_port()
    base = Path(tempfile.mkdtemp(prefix="mcp_ref-haproxy-"))
    config = base / "haproxy.cfg"
    config.write_text(haproxy_config(port, backends, threads=threads))
    check = subprocess.run([binary, "-c", "-f", str(config)], capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"haproxy refused its configuration: {check.stdout}{check.stderr}")
    log = (base / "haproxy.log").open("wb")
    process = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    log.close()
    proxy = HAProxy(process, port, base)

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"haproxy exited: {(base / 'haproxy.log').read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return proxy
        except OSError:
            time.sleep(0.05)
    proxy.close()
    raise RuntimeError("haproxy did not start listening")
