"""The ip, cidr and url libraries' signatures, and the `string()` overloads ip and cidr add.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/ip.go, cidr.go and urls.go (names, overload
ids, types). `string` is the standard conversion, which ip and cidr extend: the environment
leaves the standard declaration out and declares it whole here, the standard overloads without
an implementation, as the runtime's built-ins implement them (cel-go v0.26.0 common/stdlib).
"""

from operator import attrgetter

from cel_expr_python import cel

from npu_dra.adapters.cel import addresses, urls
from npu_dra.adapters.cel.declarations.row import Row
from npu_dra.adapters.cel.messages import CIDR, IP, URL

_T = cel.Type
_S, _B = _T.STRING, _T.BOOL
_BUILT_IN = _SHARED = None


ROWS: tuple[Row, ...] = (
    Row("ip", "string_to_ip", [_S], IP, False, addresses.ip),
    Row("isIP", "is_ip", [_S], _B, False, addresses.is_ip),
    Row("ip.isCanonical", "ip_is_canonical", [_S], _B, False, addresses.is_canonical),
    Row("family", "ip_family", [IP], _T.INT, True, addresses.family),
    Row("isUnspecified", "ip_is_unspecified", [IP], _B, True, addresses.is_unspecified),
    Row("isLoopback", "ip_is_loopback", [IP], _B, True, addresses.is_loopback),
    Row(
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        [IP],
        _B,
        True,
        addresses.is_link_local_multicast,
    ),
    Row(
        "isLinkLocalUnicast",
        "ip_is_link_local_unicast",
        [IP],
        _B,
        True,
        addresses.is_link_local_unicast,
    ),
    Row("isGlobalUnicast", "ip_is_global_unicast", [IP], _B, True, addresses.is_global_unicast),
    Row("cidr", "string_to_cidr", [_S], CIDR, False, addresses.cidr),
    Row("isCIDR", "is_cidr", [_S], _B, False, addresses.is_cidr),
    Row("containsIP", "cidr_contains_ip_string", [CIDR, _S], _B, True, addresses.contains_ip),
    Row("containsIP", "cidr_contains_ip_ip", [CIDR, IP], _B, True, addresses.contains_ip),
    Row("containsCIDR", "cidr_contains_cidr_string", [CIDR, _S], _B, True, addresses.contains_cidr),
    Row("containsCIDR", "cidr_contains_cidr", [CIDR, CIDR], _B, True, addresses.contains_cidr),
    Row("ip", "cidr_ip", [CIDR], IP, True, addresses.cidr_ip),
    Row("prefixLength", "cidr_prefix_length", [CIDR], _T.INT, True, addresses.prefix_length),
    Row("masked", "cidr_masked", [CIDR], CIDR, True, addresses.masked),
    Row("url", "string_to_url", [_S], URL, False, urls.url),
    Row("isURL", "is_url_string", [_S], _B, False, urls.is_url),
    Row("getScheme", "url_get_scheme", [URL], _S, True, attrgetter("scheme")),
    Row("getHost", "url_get_host", [URL], _S, True, attrgetter("host")),
    Row("getHostname", "url_get_hostname", [URL], _S, True, urls.hostname),
    Row("getPort", "url_get_port", [URL], _S, True, urls.port),
    Row("getEscapedPath", "url_get_escaped_path", [URL], _S, True, attrgetter("escaped_path")),
    Row("getQuery", "url_get_query", [URL], _T.Map(_S, _T.List(_S)), True, urls.query),
    Row("string", "string_to_string", [_S], _S, False, _BUILT_IN),
    Row("string", "bool_to_string", [_B], _S, False, _BUILT_IN),
    Row("string", "bytes_to_string", [_T.BYTES], _S, False, _BUILT_IN),
    Row("string", "double_to_string", [_T.DOUBLE], _S, False, _BUILT_IN),
    Row("string", "duration_to_string", [_T.DURATION], _S, False, _BUILT_IN),
    Row("string", "int64_to_string", [_T.INT], _S, False, _BUILT_IN),
    Row("string", "timestamp_to_string", [_T.TIMESTAMP], _S, False, _BUILT_IN),
    Row("string", "uint64_to_string", [_T.UINT], _S, False, _BUILT_IN),
    Row("string", "ip_to_string", [IP], _S, False, addresses.to_string),
    Row("string", "cidr_to_string", [CIDR], _S, False, _SHARED),
)
