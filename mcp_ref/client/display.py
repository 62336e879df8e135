"""What a client shows people: display names and icons it may fetch.

``display_name(obj)`` follows the schema's precedence: a tool's ``title``,
then ``annotations.title``, then ``name``; anything else with a name (prompts,
resources, resource templates, implementation info) its ``title``, then
``name``.

Icons are untrusted peer data (basic/index#33). mcp_ref never fetches them;
``safe_icon_uri`` and ``safe_icons`` tell an application which ones it may:
``https:`` URLs with a host, or ``data:`` URIs of an image type, optionally
only from the server's own origin.
"""

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from ..schema.lifecycle import Icon

__all__ = ["display_name", "safe_icon_uri", "safe_icons"]


def display_name(obj: Any) -> str:
    """The name to show a person for a tool, prompt, resource, template or implementation."""
    title = getattr(obj, "title", None)
    if title:
        return str(title)
    annotations = getattr(obj, "annotations", None)
    # only tools carry a title in their annotations (ToolAnnotations.title)
    annotated = getattr(annotations, "title", None)
    if annotated:
        return str(annotated)
    name = getattr(obj, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"{type(obj).__name__} has no name to display")
    return name


def safe_icon_uri(uri: str, *, origin: str | None = None) -> bool:
    """Whether an icon URI is safe to fetch or render.

    [basic/index#33, #34] only ``https:`` (with a host) and ``data:`` image URIs;
    ``javascript:``, ``file:``, ``http:``, ``ftp:``, ``ws:``, app schemes and the
    rest are refused; so is an ``https:`` URL whose host is ``localhost`` or an
    address of this machine or a private network. With ``origin`` (e.g. the
    server's ``https://host:port``), an ``https:`` icon must come from that origin.
    """
    try:
        parts = urlsplit(uri.strip())
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme == "data":
        media = parts.path.split(",", 1)[0].split(";", 1)[0].strip().lower()
        return media.startswith("image/")
    if scheme != "https" or not parts.hostname or parts.username is not None or parts.password is not None:
        return False
    try:
        port = parts.port or 443  # a port outside 0-65535 is no URL to fetch
        if origin is None:
            # a server names the URL; the application fetches it from the user's machine: never
            # from this machine or a private network by its address (request forgery; names are
            # the fetching code's to resolve and check, see mcp_ref.basic.transports.fetch_rules)
            return not _local_address(parts.hostname)
        want = urlsplit(origin)
        want_port = want.port or 443
    except ValueError:
        return False
    return want.scheme.lower() == "https" and want.hostname == parts.hostname and want_port == port


def _local_address(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or an address that is not globally routable (this
    machine, a private network, link-local; IPv4-mapped IPv6 addresses included)."""
    host = host.lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return not address.is_global or address.is_multicast


def safe_icons(icons: list[Icon] | None, *, origin: str | None = None) -> list[Icon]:
    """The icons of ``icons`` whose ``src`` passes :func:`safe_icon_uri` (the others are dropped)."""
    return [icon for icon in icons or () if safe_icon_uri(icon.src, origin=origin)]
