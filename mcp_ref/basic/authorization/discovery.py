"""Where the metadata documents are, and whether what they say may be believed.

* :func:`protected_resource_metadata_urls` -- RFC 9728 section 3.1: the
  path-aware well-known URL, then the root one (authorization#14, #15).
* :func:`authorization_server_metadata_urls` -- the order of
  authorization#24 (an issuer with a path) and #25 (without one): RFC 8414
  with path insertion, OpenID Connect with path insertion, OpenID Connect
  with the path appended.
* :func:`legacy_metadata_url`, :func:`legacy_endpoints` -- 2025-03-26's
  fallbacks: metadata at the MCP server's origin, then ``/authorize``,
  ``/token``, ``/register`` there (2025-03-26 authorization,
  "Fallbacks for Servers without Metadata Discovery").
* :func:`canonical_resource` -- the RFC 8707 ``resource`` value of an MCP
  server (#48-#51); :func:`resource_allowed` -- whether a protected resource
  metadata document may speak for the server we connect to (RFC 9728
  section 3.3 and 7.3); :func:`issuer_matches` -- RFC 8414 section 3.3.
"""

from urllib.parse import urlsplit

__all__ = [
    "PRM_WELL_KNOWN",
    "OAUTH_WELL_KNOWN",
    "OIDC_WELL_KNOWN",
    "protected_resource_metadata_urls",
    "authorization_server_metadata_urls",
    "legacy_metadata_url",
    "legacy_endpoints",
    "canonical_resource",
    "resource_allowed",
    "issuer_matches",
    "same_origin",
    "origin",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (scheme and host lower-cased, default port left out)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs share scheme, host and port (RFC 6454), case-insensitively."""
    return origin(a) == origin(b)


def protected_resource_metadata_urls(server_url: str) -> list[str]:
    """[basic/authorization#15] the well-known URLs to try, in order: path-aware, then root.

    The MCP endpoint's path (and query) goes after the well-known prefix
    (RFC 9728 section 3.1); an endpoint at the root has only the root URL.
    """
    parts = urlsplit(server_url)
    base = origin(server_url)
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    urls = []
    if path or parts.query:
        urls.append(base + PRM_WELL_KNOWN + path + (f"?{parts.query}" if parts.query else ""))
    urls.append(base + PRM_WELL_KNOWN)
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[tuple[str, bool]]:
    """[basic/authorization#23, #24, #25] the metadata URLs of ``issuer`` in the order to try them.

    Each is ``(url, oidc)``: whether it is an OpenID Connect document. A
    terminating ``/`` of the issuer's path is removed before insertion
    (RFC 8414 section 3.1).
    """
    base = origin(issuer)
    path = urlsplit(issuer).path.rstrip("/")
    if path:
        return [
            (base + OAUTH_WELL_KNOWN + path, False),
            (base + OIDC_WELL_KNOWN + path, True),
            (base + path + OIDC_WELL_KNOWN, True),
        ]
    return [(base + OAUTH_WELL_KNOWN, False), (base + OIDC_WELL_KNOWN, True)]


def legacy_metadata_url(server_url: str) -> str:
    """[2025-03-26:basic/authorization#15, #16] the authorization base URL is the MCP server's URL
    without its path; its metadata is at the RFC 8414 well-known path there."""
    return origin(server_url) + OAUTH_WELL_KNOWN


def legacy_endpoints(server_url: str) -> dict[str, str]:
    """[2025-03-26:basic/authorization#15, #17] the default endpoints at the authorization base URL,
    for servers without metadata."""
    base = origin(server_url)
    return {
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/token",
        "registration_endpoint": base + "/register",
    }


def canonical_resource(url: str) -> str:
    """[basic/authorization#48, #49, #50, #51] the RFC 8707 resource identifier of an MCP server.

    Scheme and host lower-cased, default port and fragment dropped, and no
    trailing slash (a path of ``/`` is no path); the path and query stay, as
    they name this server among others on the host (the most specific URI).
    """
    parts = urlsplit(url)
    return origin(url) + parts.path.rstrip("/") + (f"?{parts.query}" if parts.query else "")


def resource_allowed(resource: str, server_url: str) -> bool:
    """Whether protected resource metadata naming ``resource`` may speak for ``server_url``.

    Decision (spec_notes/basic/authorization.md): same origin, and the
    resource's path is the server's path or one of its ancestors on a ``/``
    boundary (metadata at the root names the origin, authorization#14). A
    resource on another origin, or a sibling path, is refused: a token for
    it would be one for another server.
    """
    if not same_origin(resource, server_url):
        return False
    theirs = urlsplit(resource).path.rstrip("/")
    ours = urlsplit(server_url).path.rstrip("/")
    return ours == theirs or ours.startswith(theirs + "/")


def issuer_matches(expected: str, actual: str) -> bool:
    """RFC 8414 section 3.3: the document's ``issuer`` is the one we asked about.

    Identical strings, except that an empty path and ``/`` are the same
    (RFC 3986 section 6.2.3), as libraries disagree on writing it.
    """
    return _strip_root(expected) == _strip_root(actual)


def _strip_root(url: str) -> str:
    parts = urlsplit(url)
    return url[:-1] if parts.path == "/" and url.endswith("/") and not parts.query else url
