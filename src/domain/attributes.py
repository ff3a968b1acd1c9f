"""Device attribute values and the naming rules ResourceSlices impose on attributes.

An attribute is exactly one of int, bool, string or version (resource.k8s.io/v1); qualified names
are `<C identifier>` or `<dns subdomain>/<C identifier>`.
"""

import re

import attrs

from npu_dra.domain.errors import InvalidName

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}\Z")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*\Z")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?\Z"
)
MAX_STRING_BYTES = 64


@attrs.frozen
class Version:
    """A strict semantic version attribute value (no leading `v`, no leading zeros)."""

    text: str = attrs.field()

    @text.validator
    def _check(self, _: "attrs.Attribute[str]", value: str) -> None:
        if not _SEMVER.match(value) or len(value.encode()) > MAX_STRING_BYTES:
            raise InvalidName(f"{value!r} is not a strict semantic version")


AttributeValue = bool | int | str | Version


def is_dns_subdomain(name: str, max_length: int = 253) -> bool:
    return len(name) <= max_length and bool(_DNS_SUBDOMAIN.match(name))


def is_dns_label(name: str) -> bool:
    return len(name) <= 63 and bool(re.match(rf"^{_DNS_LABEL}\Z", name))


def check_qualified_name(name: str) -> str:
    """Return `name` if it is a valid attribute/capacity name, else raise InvalidName."""
    domain, _, identifier = name.rpartition("/")
    if "/" in domain or (domain and not is_dns_subdomain(domain, 63)):
        raise InvalidName(f"attribute name {name!r}: domain must be a DNS subdomain of <=63")
    if not _IDENTIFIER.match(identifier):
        raise InvalidName(f"attribute name {name!r}: identifier must be a C identifier of <=32")
    return name


def check_attribute_value(name: str, value: AttributeValue) -> AttributeValue:
    if isinstance(value, str) and len(value.encode()) > MAX_STRING_BYTES:
        raise InvalidName(f"attribute {name!r}: string longer than {MAX_STRING_BYTES} bytes")
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise InvalidName(f"attribute {name!r}: int out of int64 range")
    return value


def qualify(name: str, driver: str) -> tuple[str, str]:
    """Split a possibly unqualified name into (domain, identifier); bare names are the driver's."""
    domain, _, identifier = name.rpartition("/")
    return (domain or driver, identifier)
