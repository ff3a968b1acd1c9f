"""The Kubernetes CEL ip and cidr libraries, with Go's net/netip semantics, runtime-free.

Facts from k8s.io/apiserver@v0.34.3/pkg/cel/library/ip.go and cidr.go (what is refused: zones,
IPv4-mapped IPv6 addresses; the error texts) and Go's net/netip (go1.24): ParsePrefix's rules
for the bits, and the address classes, which are not Python's (Go's global unicast includes
private addresses; its link-local multicast is 224.0.0.0/24 and ff02::/16, any flag bits).
An IP is a Python address, a CIDR a Python interface: an address with its prefix length, the
address kept as written, as netip.Prefix keeps it (`masked()` clears the host bits).
"""

import ipaddress
import json
import re

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Cidr = ipaddress.IPv4Interface | ipaddress.IPv6Interface

_BITS = re.compile(r"0|[1-9][0-9]*")
_LINK_LOCAL_MULTICAST_V4 = ipaddress.IPv4Network("224.0.0.0/24")
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
_CONVERSION = "network address parse error during conversion from string"


class _Refused(ValueError):
    """A valid address Kubernetes refuses: its message is Kubernetes' whole message."""


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _go_address(text: str) -> Address:
    """netip.ParseAddr, less zones and IPv4-mapped addresses, which Kubernetes refuses."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError as error:
        raise ValueError(f"ParseAddr({_quoted(text)}): unable to parse IP") from error
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        raise _Refused(f"IP address {_quoted(text)} with zone value is not allowed")
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise _Refused(f"IPv4-mapped IPv6 address {_quoted(text)} is not allowed")
    return address


def ip(text: str) -> Address:
    try:
        return _go_address(text)
    except _Refused:
        raise
    except ValueError as error:
        raise ValueError(
            f"IP Address {_quoted(text)} parse error during conversion from string: {error}"
        ) from error


def is_ip(text: str) -> bool:
    try:
        _go_address(text)
    except ValueError:
        return False
    return True


def is_canonical(text: str) -> bool:
    return str(ip(text)) == text


def is_ip_literal(text: str) -> bool:
    """What Go's URL parser allows in brackets: an IPv6 address, zoned or IPv4-mapped or not."""
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv6Address)
    except ValueError:
        return False


def family(address: Address) -> int:
    return address.version


def is_unspecified(address: Address) -> bool:
    return address.is_unspecified


def is_loopback(address: Address) -> bool:
    return address.is_loopback


def is_link_local_multicast(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in _LINK_LOCAL_MULTICAST_V4
    return int(address) >> 112 & 0xFF0F == 0xFF02


def is_link_local_unicast(address: Address) -> bool:
    return address.is_link_local


def is_global_unicast(address: Address) -> bool:
    if address == _BROADCAST:
        return False
    return not (
        address.is_unspecified
        or address.is_loopback
        or address.is_multicast
        or address.is_link_local
    )


def cidr(text: str) -> Cidr:
    try:
        return _go_prefix(text)
    except _Refused as error:
        raise ValueError(f"{_CONVERSION}: {error}") from error
    except ValueError as error:
        raise ValueError(f"{_CONVERSION}: {_CONVERSION}: {error}") from error


def is_cidr(text: str) -> bool:
    try:
        _go_prefix(text)
    except ValueError:
        return False
    return True


def _go_prefix(text: str) -> Cidr:
    """netip.ParsePrefix, less IPv4-mapped addresses, which Kubernetes refuses."""
    address_text, slash, bits_text = text.rpartition("/")
    failure = f"netip.ParsePrefix({_quoted(text)})"
    if not slash:
        raise ValueError(f"{failure}: no '/'")
    try:
        address = ipaddress.ip_address(address_text)
    except ValueError as error:
        unparsed = f"ParseAddr({_quoted(address_text)}): unable to parse IP"
        raise ValueError(f"{failure}: {unparsed}") from error
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        raise ValueError(f"{failure}: IPv6 zones cannot be present in a prefix")
    if not _BITS.fullmatch(bits_text):
        raise ValueError(f"{failure}: bad bits after slash: {_quoted(bits_text)}")
    if int(bits_text) > address.max_prefixlen:
        raise ValueError(f"{failure}: prefix length out of range")
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise _Refused(f"IPv4-mapped IPv6 address {_quoted(text)} is not allowed")
    return ipaddress.ip_interface((address, int(bits_text)))


def contains_ip(network: Cidr, address: Address | str) -> bool:
    return (ip(address) if isinstance(address, str) else address) in network.network


def contains_cidr(network: Cidr, other: Cidr | str) -> bool:
    inner = cidr(other) if isinstance(other, str) else other
    if inner.version != network.version:
        return False
    return inner.network.subnet_of(network.network)  # type: ignore[arg-type]


def cidr_ip(network: Cidr) -> Address:
    return network.ip


def masked(network: Cidr) -> Cidr:
    return ipaddress.ip_interface((network.network.network_address, network.network.prefixlen))


def prefix_length(network: Cidr) -> int:
    return network.network.prefixlen


def to_string(value: Address | Cidr) -> str:
    return str(value)
