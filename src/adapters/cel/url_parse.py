"""Go's URL parser, ported: what the Kubernetes url library accepts and how it splits a URL.

Kubernetes (k8s.io/apiserver@v0.34.3/pkg/cel/library/urls.go) checks a URL with Go's
`url.ParseRequestURI` and reads it with `url.Parse`; Python's urllib accepts and splits
differently (it never rejects a bad port or escape), so this follows Go's src/net/url/url.go
(go1.26; Kubernetes v1.34.3 is built with go1.24.11, whose host parsing is this one with
`GODEBUG=urlstrictcolons=0`: any colon in a host is allowed, the last one starts the port).
It works on bytes, as Go does, so a %-escape that is not UTF-8 decodes as Go would.
"""

import attrs

from npu_dra.adapters.cel.addresses import is_ip_literal
from npu_dra.adapters.cel.url_escape import (
    FRAGMENT,
    HOST,
    PATH,
    USERINFO,
    ZONE,
    URLError,
    escape,
    quote,
    unescape,
    valid_optional_port,
)

_SCHEME_FIRST = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SCHEME_REST = _SCHEME_FIRST | frozenset(b"0123456789+-.")
_USERINFO = _SCHEME_REST | frozenset(b"_:~!$&'()*,;=%@")


@attrs.frozen
class GoURL:
    """Go's url.URL, less what the url library never reads."""

    scheme: bytes = b""
    opaque: bytes = b""
    user: tuple[bytes, bytes | None] | None = None  # username, password if one was given
    host: bytes = b""
    path: bytes = b""
    raw_path: bytes = b""
    omit_host: bool = False
    force_query: bool = False
    raw_query: bytes = b""
    fragment: bytes = b""
    raw_fragment: bytes = b""


def parse_request_uri(raw: bytes) -> GoURL:
    """url.ParseRequestURI: an absolute URI or an absolute path, nothing split off at `#`."""
    return _parse(raw, via_request=True)


def parse(raw: bytes) -> GoURL:
    """url.Parse: any URL reference, its fragment split off at the first `#`."""
    without_fragment, _, raw_fragment = raw.partition(b"#")
    url = _parse(without_fragment, via_request=False)
    fragment = unescape(raw_fragment, FRAGMENT)
    if escape(fragment, FRAGMENT) == raw_fragment:
        raw_fragment = b""
    return attrs.evolve(url, fragment=fragment, raw_fragment=raw_fragment)


def _parse(raw: bytes, *, via_request: bool) -> GoURL:
    if any(byte < 0x20 or byte == 0x7F for byte in raw):
        raise URLError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise URLError("empty url")
    if raw == b"*":
        return GoURL(path=b"*")
    scheme, rest = _scheme(raw)
    force_query = rest.endswith(b"?") and rest.count(b"?") == 1
    rest, _, raw_query = rest[:-1].partition(b"?") if force_query else rest.partition(b"?")
    if not rest.startswith(b"/"):
        if scheme:
            return GoURL(scheme=scheme, opaque=rest, force_query=force_query, raw_query=raw_query)
        if via_request:
            raise URLError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    user, host, omit_host = None, b"", False
    if (scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, slash, path = rest[2:].partition(b"/")
        rest = slash + path
        user, host = _authority(authority)
    elif scheme and rest.startswith(b"/"):
        omit_host = True
    path = unescape(rest, PATH)
    raw_path = b"" if escape(path, PATH) == rest else rest
    return GoURL(scheme, b"", user, host, path, raw_path, omit_host, force_query, raw_query)


def _scheme(raw: bytes) -> tuple[bytes, bytes]:
    for index, byte in enumerate(raw):
        if byte == ord(":"):
            if index == 0:
                raise URLError("missing protocol scheme")
            return raw[:index].lower(), raw[index + 1 :]
        if byte not in (_SCHEME_FIRST if index == 0 else _SCHEME_REST):
            return b"", raw
    return b"", raw


def _authority(authority: bytes) -> tuple[tuple[bytes, bytes | None] | None, bytes]:
    userinfo, at, host_port = authority.rpartition(b"@")
    host = _host(host_port)
    if not at:
        return None, host
    if any(byte not in _USERINFO for byte in userinfo):
        raise URLError("net/url: invalid userinfo")
    username, colon, password = userinfo.partition(b":")
    username = unescape(username, USERINFO)
    return (username, unescape(password, USERINFO) if colon else None), host


def _host(host: bytes) -> bytes:
    opening = host.rfind(b"[")
    if opening > 0:
        raise URLError("invalid IP-literal")
    if opening == 0:
        return _ip_literal(host)
    colon = host.rfind(b":")
    if colon != -1 and not valid_optional_port(host[colon:]):
        raise URLError(f"invalid port {quote(host[colon:])} after host")
    return unescape(host, HOST)


def _ip_literal(host: bytes) -> bytes:
    """`[` IPv6 address, zone optionally escaped as %25, `]`, then an optional port."""
    closing = host.rfind(b"]")
    if closing < 0:
        raise URLError("missing ']' in host")
    colon_port = host[closing + 1 :]
    if not valid_optional_port(colon_port):
        raise URLError(f"invalid port {quote(colon_port)} after host")
    port = unescape(colon_port, HOST)
    hostname = host[1:closing]
    zone = hostname.find(b"%25")
    if zone >= 0:
        hostname = unescape(hostname[:zone], HOST) + unescape(hostname[zone:], ZONE)
    else:
        hostname = unescape(hostname, HOST)
    if not is_ip_literal(hostname.decode("utf-8", "replace")):
        raise URLError("invalid IP-literal")
    return b"[" + hostname + b"]" + port
