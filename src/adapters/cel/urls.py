"""The Kubernetes CEL url library: url(), isURL() and the URL getters, with Go's semantics.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/urls.go (a URL must pass Go's
ParseRequestURI and is then read with Parse; the error texts) and k8s.io/apiserver@v0.34.3/
pkg/cel/url.go (two URLs are equal when their Go String()s are). A Url holds what the getters
return, worked out once when the URL is made; Go's parsing and escaping are url_parse.py's.
"""

import functools

import attrs

from npu_dra.adapters.cel.url_escape import (
    FRAGMENT,
    HOST,
    PATH,
    QUERY_COMPONENT,
    USERINFO,
    Mode,
    URLError,
    escape,
    quote,
    unescape,
    valid_encoded,
    valid_optional_port,
)
from npu_dra.adapters.cel.url_parse import GoURL, parse, parse_request_uri


@attrs.frozen
class Url:
    """A URL as the url library shows it; `text` is Go's String(), which equality compares."""

    text: str
    scheme: str
    host: str
    escaped_path: str
    raw_query: str

    def fields(self) -> dict[str, str]:
        return attrs.asdict(self)


@functools.lru_cache(maxsize=1024)
def url(text: str) -> Url:
    raw = text.encode()
    try:
        parse_request_uri(raw)
        parsed = parse(raw)
    except URLError as error:
        raise ValueError(
            f"URL parse error during conversion from string: parse {quote(raw)}: {error}"
        ) from error
    return Url(
        _text(_string(parsed)),
        _text(parsed.scheme),
        _text(parsed.host),
        _text(_escaped_path(parsed)),
        _text(parsed.raw_query),
    )


def is_url(text: str) -> bool:
    try:
        parse_request_uri(text.encode())
    except URLError:
        return False
    return True


def hostname(value: Url) -> str:
    return _split_host_port(value.host)[0]


def port(value: Url) -> str:
    return _split_host_port(value.host)[1]


def query(value: Url) -> dict[str, list[str]]:
    """Go's URL.Query(): a malformed pair, or one with a raw `;`, is dropped, not an error."""
    values: dict[str, list[str]] = {}
    for pair in value.raw_query.encode().split(b"&"):
        if not pair or b";" in pair:
            continue
        key, _, item = pair.partition(b"=")
        try:
            key, item = unescape(key, QUERY_COMPONENT), unescape(item, QUERY_COMPONENT)
        except URLError:
            continue
        values.setdefault(_text(key), []).append(_text(item))
    return values


def _split_host_port(host: str) -> tuple[str, str]:
    name, colon, number = host.rpartition(":")
    if not colon or not valid_optional_port(f":{number}".encode()):
        name, number = host, ""
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    return name, number


def _escaped_path(url: GoURL) -> bytes:
    kept = _raw_kept(url.raw_path, url.path, PATH)
    if kept is not None:
        return kept
    return b"*" if url.path == b"*" else escape(url.path, PATH)


def _escaped_fragment(url: GoURL) -> bytes:
    kept = _raw_kept(url.raw_fragment, url.fragment, FRAGMENT)
    return escape(url.fragment, FRAGMENT) if kept is None else kept


def _raw_kept(raw: bytes, decoded: bytes, mode: Mode) -> bytes | None:
    """Go's EscapedPath and EscapedFragment keep the raw form where it is a valid encoding of
    the decoded value; None where they escape the value afresh."""
    if raw and valid_encoded(raw, mode):
        try:
            if unescape(raw, mode) == decoded:
                return raw
        except URLError:
            pass
    return None


def _string(url: GoURL) -> bytes:
    """Go's URL.String()."""
    text = url.scheme + b":" if url.scheme else b""
    if url.opaque:
        text += url.opaque
    else:
        text += _authority(url)
        path = _escaped_path(url)
        if path and not path.startswith(b"/") and url.host:
            text += b"/"
        if not text and b":" in path.partition(b"/")[0]:
            text += b"./"
        text += path
    if url.force_query or url.raw_query:
        text += b"?" + url.raw_query
    if url.fragment:
        text += b"#" + _escaped_fragment(url)
    return text


def _authority(url: GoURL) -> bytes:
    if not (url.scheme or url.host or url.user):
        return b""
    if url.omit_host and not url.host and not url.user:
        return b""
    text = b"//" if url.host or url.path or url.user else b""
    if url.user:
        username, password = url.user
        text += escape(username, USERINFO)
        text += b"" if password is None else b":" + escape(password, USERINFO)
        text += b"@"
    return text + escape(url.host, HOST)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")
