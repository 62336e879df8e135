"""Where the OAuth client's fetches may go: every URL it fetches was named by a server.

A hostile MCP server names the URL of its resource metadata (``WWW-Authenticate``),
which names the authorization servers, whose metadata names the token and
registration endpoints. Followed blindly, that points the client -- from the
user's machine or network -- at anything it can reach: a loopback admin page, a
router, a cloud metadata service (request forgery, the SSRF of the MCP security
best practices). The rule (spec_notes/basic/authorization.md, "Fetch rules"):

* a URL a server named is fetched only from **public** addresses, unless the MCP
  server itself is on such an address (a server on this machine may send the
  client to this machine, one on a private network to that network), or the
  application allows more (:class:`FetchPolicy`);
* a host name is resolved once, every address it has must be allowed, and the
  connection goes to those addresses (no second resolution that could answer
  otherwise: DNS rebinding);
* plain ``http://`` only to this machine, and only where it may be reached;
  redirects are never followed; each fetch is bounded in time and size
  (:func:`~.http_fetch.http_exchange`) and logged.
"""

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

import attrs
import trio

from ...errors import HTTPTransportError

__all__ = [
    "ADDRESS_KINDS",
    "FetchPolicy",
    "FetchRefused",
    "address_kind",
    "policy_for_server",
    "resolve",
]
#: the kinds of address :func:`address_kind` tells apart
ADDRESS_KINDS = ("public", "loopback", "private", "link-local", "reserved")

_PRIVATE = tuple(
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7", "fec0::/10")
)
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # (connecting to 0.0.0.0 reaches this machine)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def address_kind(address: str | Address) -> str:
    """What kind of address this is: ``public``, ``loopback`` (this machine, ``0.0.0.0`` and ``::``
    included), ``private`` (RFC 1918, shared 100.64/10, IPv6 unique and site local), ``link-local``
    (169.254/16, where cloud metadata services answer; fe80::/10), or ``reserved`` (multicast,
    documentation, benchmarking and every other range that is not globally routable).

    An IPv6 address carrying an IPv4 one (mapped ``::ffff:a.b.c.d``, 6to4, the NAT64 prefix) is
    the kind of the IPv4 address it carries.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0]) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address):
        carried = ip.ipv4_mapped or ip.sixtofour
        if carried is None and ip in _NAT64:
            carried = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if carried is not None:
            return address_kind(carried)
    if ip.is_loopback or ip.is_unspecified or ip in _THIS_NETWORK:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if any(ip in network for network in _PRIVATE):
        return "private"
    if ip.is_global and not ip.is_multicast:
        return "public"
    return "reserved"


def _kinds(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str):
        raise TypeError("kinds is a collection of address kinds, not one string")
    return frozenset(value)


def _networks(value: Iterable[str | Network]) -> tuple[Network, ...]:
    if isinstance(value, str):
        raise TypeError("networks is a collection of networks, not one string")
    return tuple(ipaddress.ip_network(n) for n in value)


class FetchRefused(HTTPTransportError):
    """A fetch the :class:`FetchPolicy` does not allow; nothing was sent."""


@attrs.frozen(kw_only=True)
class FetchPolicy:
    """Where the OAuth client's fetches may go: every URL it fetches was named by a server.

    ``kinds`` are the :func:`address_kind` s reachable (public ones only, by
    default); ``networks`` are ranges reachable whatever their kind (what the
    user allows: ``("10.20.0.0/16",)``). A host name is resolved once and every
    address it has must be allowed; the connection goes to those very
    addresses (a second resolution could answer otherwise: DNS rebinding).
    """

    kinds: frozenset[str] = attrs.field(default=frozenset({"public"}), converter=_kinds)
    networks: tuple[Network, ...] = attrs.field(default=(), converter=_networks)

    def __attrs_post_init__(self) -> None:
        if unknown := self.kinds - set(ADDRESS_KINDS):
            raise ValueError(f"unknown address kinds {sorted(unknown)}: the kinds are {', '.join(ADDRESS_KINDS)}")

    def allowing(self, kinds: Iterable[str]) -> "FetchPolicy":
        """This policy with ``kinds`` reachable too."""
        return FetchPolicy(kinds=self.kinds | frozenset(kinds), networks=self.networks)

    def allows(self, address: str | Address) -> bool:
        ip = ipaddress.ip_address(address.split("%", 1)[0]) if isinstance(address, str) else address
        return address_kind(ip) in self.kinds or any(ip in n for n in self.networks if n.version == ip.version)

    def why_not(self, url: str, address: str) -> str | None:
        """Why ``url`` may not be fetched from ``address`` (None: it may)."""
        if self.allows(address):
            return None
        kind = address_kind(address)
        return (
            f"refusing to fetch {url}: {address} is a {kind} address, and a server named this URL "
            "(only public addresses are reached for those, unless the MCP server itself is on such an "
            "address or the application allows it: OAuthClient(fetch_policy=FetchPolicy(...)))"
        )

    def check_literal(self, url: str) -> None:
        """Refuse ``url`` when its host is an address (or ``localhost``) that is not allowed; host
        names are left to :meth:`check_resolved`. (For a URL that is not fetched but opened in the
        user's browser, this is all that can be checked.)"""
        host = urlsplit(url).hostname or ""
        if host.lower() == "localhost" or host.lower().endswith(".localhost"):
            address = "127.0.0.1"
        else:
            try:
                address = str(ipaddress.ip_address(host.split("%", 1)[0]))
            except ValueError:
                return
        if (problem := self.why_not(url, address)) is not None:
            raise FetchRefused(problem, url=url)

    def plain_http_allowed(self, url: str) -> bool:
        """Whether ``url`` may be plain ``http://``: only for this machine, and only when this
        machine may be reached (basic/authorization#79, #80: https, loopback excepted)."""
        host = (urlsplit(url).hostname or "").lower()
        if host == "localhost":
            return self.allows("127.0.0.1")
        try:
            ip = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        return address_kind(ip) == "loopback" and self.allows(ip)


async def resolve(host: str, port: int) -> list[str]:
    """The addresses of ``host`` (an address stays itself), in the resolver's order, no duplicates."""
    infos = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    seen: list[str] = []
    for *_, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in seen:
            seen.append(address)
    return seen


async def policy_for_server(server_url: str, base: FetchPolicy | None = None, *, timeout: float = 10.0) -> FetchPolicy:
    """``base`` (public addresses only by default) with the kinds of the MCP server's own addresses:
    a server on this machine may send the client to this machine, one on a private network to
    that network -- the user chose to talk to it there. A name that does not resolve adds nothing."""
    policy = base if base is not None else FetchPolicy()
    parts = urlsplit(server_url)
    host = parts.hostname or ""
    try:
        with trio.fail_after(timeout):
            addresses = await resolve(host, parts.port or (443 if parts.scheme == "https" else 80))
    except (OSError, trio.TooSlowError):
        return policy
    return policy.allowing(address_kind(a) for a in addresses)
