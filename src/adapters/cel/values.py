"""How attribute values and library values cross into and out of the C++ CEL runtime.

Our own types travel as the messages of messages.py. A Quantity message holds its exact value as
the text of a reduced Fraction ("17179869184", "3/2"), so no comparison ever goes through a
float; an IP holds its canonical text, a CIDR its address as written and its prefix length, as
Go's netip.Prefix does. A list function typed `dyn` for the runtime (declarations/lists.py)
returns durations and timestamps, which the binding then takes only as protobuf values, and
bytes, which it hands in as a bytearray and takes back only as bytes.
"""

import datetime
import functools
import ipaddress
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from google.protobuf import duration_pb2, message, timestamp_pb2

from npu_dra.adapters.cel.messages import (
    CidrMessage,
    IpMessage,
    QuantityMessage,
    SemverMessage,
    UrlMessage,
)
from npu_dra.adapters.cel.semver import Semver, parse_semver
from npu_dra.adapters.cel.urls import Url
from npu_dra.domain.attributes import Version
from npu_dra.domain.quantity import Quantity

_Interface = (ipaddress.IPv4Interface, ipaddress.IPv6Interface)
_Address = (ipaddress.IPv4Address, ipaddress.IPv6Address)


# The caches below hold messages that nothing mutates: the runtime copies what it is given.
@functools.lru_cache(maxsize=4096)
def quantity_value(value: Fraction) -> message.Message:
    return QuantityMessage(value=str(value))  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=4096)
def semver_value(version: Semver) -> message.Message:
    return SemverMessage(  # type: ignore[no-any-return]
        major=version.major,
        minor=version.minor,
        patch=version.patch,
        prerelease=version.prerelease,
    )


@functools.lru_cache(maxsize=4096)
def _version_value(version: Version) -> message.Message:
    return semver_value(parse_semver(version.text))


@functools.lru_cache(maxsize=4096)
def _fraction(text: str) -> Fraction:
    return Fraction(text)


def to_cel(value: object) -> object:
    """The CEL form of an attribute or capacity (a hot path: plain values pass straight through)."""
    if isinstance(value, Quantity):
        return quantity_value(value.value)
    if isinstance(value, Semver):
        return semver_value(value)
    if isinstance(value, Version):
        return _version_value(value)
    return value


def result_to_cel(value: object) -> object:
    """The CEL form of what a library function returns."""
    for kinds, convert in _RESULTS:
        if isinstance(value, kinds):
            return convert(value)
    return to_cel(value)


def _duration(value: datetime.timedelta) -> message.Message:
    duration = duration_pb2.Duration()
    duration.FromTimedelta(value)
    return duration


def _timestamp(value: datetime.datetime) -> message.Message:
    timestamp = timestamp_pb2.Timestamp()
    timestamp.FromDatetime(value)
    return timestamp


_RESULTS: tuple[tuple[type | tuple[type, ...], Callable[[Any], object]], ...] = (
    # A CIDR, an interface, is also an address: it comes first.
    (_Interface, lambda cidr: CidrMessage(address=str(cidr.ip), bits=cidr.network.prefixlen)),
    (_Address, lambda address: IpMessage(address=str(address))),
    (Url, lambda url: UrlMessage(**url.fields())),
    (datetime.timedelta, _duration),
    (datetime.datetime, _timestamp),
    (bytearray, bytes),
)


def from_cel(value: object) -> object:
    """The Python form of a function argument: messages back to our own value types."""
    if isinstance(value, QuantityMessage):
        return Quantity(_fraction(value.value))
    if isinstance(value, SemverMessage):
        return Semver(value.major, value.minor, value.patch, value.prerelease)
    if isinstance(value, IpMessage):
        return ipaddress.ip_address(value.address)
    if isinstance(value, CidrMessage):
        return ipaddress.ip_interface(f"{value.address}/{value.bits}")
    if isinstance(value, UrlMessage):
        return Url(value.text, value.scheme, value.host, value.escaped_path, value.raw_query)
    return value
