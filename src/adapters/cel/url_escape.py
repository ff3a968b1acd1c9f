"""Go's URL %-escaping, ported from src/net/url/url.go (go1.26; unchanged since go1.24).

`unescape` is what rejects a URL with a bad escape or a forbidden host byte; `escape` gives the
escaped path Kubernetes' getEscapedPath returns. Both work on bytes, one mode per URL part.
"""

from enum import Enum

_ALPHANUMERIC = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_HOST_EXTRA = frozenset(b"!$&'()*+,;=:[]<>\"")
_RESERVED = frozenset(b"$&+,/:;=?@")
_PATH_SUB_DELIMS = frozenset(b"!$&'()*+,;=:@[]%")


class Mode(Enum):
    PATH = "path"
    PATH_SEGMENT = "path segment"
    HOST = "host"
    ZONE = "zone"
    USERINFO = "userinfo"
    QUERY_COMPONENT = "query component"
    FRAGMENT = "fragment"


PATH, HOST, ZONE, USERINFO = Mode.PATH, Mode.HOST, Mode.ZONE, Mode.USERINFO
QUERY_COMPONENT, FRAGMENT = Mode.QUERY_COMPONENT, Mode.FRAGMENT


# Of the reserved bytes, those each part escapes; a part not named here escapes them all.
_RESERVED_ESCAPED = {
    PATH: b"?",
    Mode.PATH_SEGMENT: b"/;,?",
    USERINFO: b"@/?:",
    QUERY_COMPONENT: bytes(_RESERVED),
    FRAGMENT: b"",
}


class URLError(ValueError):
    """Go's parse error, worded as Go words it."""


def should_escape(byte: int, mode: Mode) -> bool:
    if byte in _ALPHANUMERIC or byte in b"-_.~":
        return False
    if mode in (HOST, ZONE) and byte in _HOST_EXTRA:
        return False
    if byte in _RESERVED and mode in _RESERVED_ESCAPED:
        return byte in _RESERVED_ESCAPED[mode]
    return not (mode is FRAGMENT and byte in b"!()*")


def unescape(text: bytes, mode: Mode) -> bytes:
    """Go's unescape: %XX decoded, `+` a space in a query component."""
    _check_escapes(text, mode)
    decoded, index = bytearray(), 0
    while index < len(text):
        byte = text[index]
        if byte == ord("%"):
            decoded.append(int(text[index + 1 : index + 3], 16))
            index += 3
            continue
        decoded.append(ord(" ") if byte == ord("+") and mode is QUERY_COMPONENT else byte)
        index += 1
    return bytes(decoded)


def _check_escapes(text: bytes, mode: Mode) -> None:
    index = 0
    while index < len(text):
        byte = text[index]
        if byte == ord("%"):
            escape_ = text[index : index + 3]
            if len(escape_) < 3 or not set(escape_[1:]) <= _HEX:
                raise URLError(f"invalid URL escape {quote(escape_)}")
            value = int(escape_[1:], 16)
            if mode is HOST and value < 0x80 and escape_ != b"%25":
                raise URLError(f"invalid URL escape {quote(escape_)}")
            if mode is ZONE and escape_ != b"%25" and value != 0x20 and should_escape(value, HOST):
                raise URLError(f"invalid URL escape {quote(escape_)}")
            index += 3
            continue
        if mode in (HOST, ZONE) and byte < 0x80 and should_escape(byte, mode):
            raise URLError(f"invalid character {quote(bytes([byte]))} in host name")
        index += 1


def escape(text: bytes, mode: Mode) -> bytes:
    escaped = bytearray()
    for byte in text:
        if byte == ord(" ") and mode is QUERY_COMPONENT:
            escaped.append(ord("+"))
        elif should_escape(byte, mode):
            escaped.extend(b"%%%02X" % byte)
        else:
            escaped.append(byte)
    return bytes(escaped)


def valid_encoded(text: bytes, mode: Mode) -> bool:
    """Whether `text` is a valid escaped path or fragment: nothing in it would be escaped."""
    return all(byte in _PATH_SUB_DELIMS or not should_escape(byte, mode) for byte in text)


def valid_optional_port(port: bytes) -> bool:
    """Empty, or a colon and digits."""
    return not port or (port[:1] == b":" and all(byte in b"0123456789" for byte in port[1:]))


def quote(text: bytes) -> str:
    """Go's %q, near enough for an error message."""
    readable = text.decode("utf-8", "replace")
    return '"' + readable.replace("\\", "\\\\").replace('"', '\\"') + '"'
