"""Kubernetes' ip and cidr libraries, with Go's net/netip semantics."""

import pytest

from npu_dra.adapters.cel import CelSelectorEvaluator
from npu_dra.domain.errors import SelectorError
from tests.support.cel_expressions import holds


@pytest.mark.parametrize(
    "expression",
    [
        'isIP("1.2.3.4") && isIP("::1")',
        '!isIP("127.0.0.256") && !isIP(":::1")',
        '!isIP("01.2.3.4")',  # a leading zero
        '!isIP("fe80::1%eth0")',  # a zone
        '!isIP("::ffff:1.2.3.4")',  # IPv4-mapped
        'ip.isCanonical("127.0.0.1") && ip.isCanonical("2001:db8::abcd")',
        '!ip.isCanonical("2001:DB8::ABCD") && !ip.isCanonical("2001:db8::0:0:0:abcd")',
        'ip("127.0.0.1").family() == 4 && ip("::1").family() == 6',
        'ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()',
        'ip("127.1.2.3").isLoopback() && ip("::1").isLoopback() && !ip("::2").isLoopback()',
        'ip("224.0.0.1").isLinkLocalMulticast() && !ip("224.0.1.1").isLinkLocalMulticast()',
        'ip("ff02::1").isLinkLocalMulticast() && ip("ff12::1").isLinkLocalMulticast()',
        'ip("169.254.169.254").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()',
        'ip("10.0.0.1").isGlobalUnicast() && ip("fd00::1").isGlobalUnicast()',  # private too
        '!ip("255.255.255.255").isGlobalUnicast() && !ip("ff00::1").isGlobalUnicast()',
        'string(ip("2001:DB8::1")) == "2001:db8::1"',
        'ip("1.2.3.4") == ip("1.2.3.4") && ip("1.2.3.4") != ip("1.2.3.5")',
    ],
)
def test_the_kubernetes_ip_examples_hold(evaluator: CelSelectorEvaluator, expression: str) -> None:
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    "expression",
    [
        'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))',
        '!cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))',
        'cidr("192.168.0.0/24").containsIP("192.168.0.1")',
        '!cidr("0.0.0.0/0").containsIP(ip("::1"))',
        'cidr("192.168.0.0/16").containsCIDR(cidr("192.168.10.0/24"))',
        '!cidr("192.168.1.0/24").containsCIDR("192.168.2.0/24")',
        '!cidr("192.168.10.0/24").containsCIDR("192.168.0.0/16")',
        'cidr("192.168.0.1/24").ip() == ip("192.168.0.1")',
        'cidr("::1/128").ip().family() == 6',
        'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")',
        'cidr("192.168.0.1/24") != cidr("192.168.0.1/24").masked()',
        'cidr("192.168.0.0/16").prefixLength() == 16 && cidr("::1/128").prefixLength() == 128',
        'string(cidr("2001:DB8::/32")) == "2001:db8::/32"',
        'isCIDR("192.168.0.0/16") && isCIDR("192.168.0.1/16")',  # host bits are kept, not refused
        '!isCIDR("192.168.0.0/33") && !isCIDR("::1/129")',
        '!isCIDR("192.168.0.0/016") && !isCIDR("192.168.0.0/255.255.0.0")',
        '!isCIDR("::ffff:1.2.3.4/120") && !isCIDR("fe80::1%eth0/64")',
    ],
)
def test_the_kubernetes_cidr_examples_hold(
    evaluator: CelSelectorEvaluator, expression: str
) -> None:
    assert holds(evaluator, expression)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ('ip("::ffff:1.2.3.4") == ip("1.2.3.4")', "IPv4-mapped IPv6 address"),
        ('ip("fe80::1%eth0") == ip("fe80::1")', "with zone value is not allowed"),
        ('ip("1.2.3") == ip("1.2.3.4")', "parse error during conversion from string"),
        ('cidr("10.0.0.0/33") == cidr("10.0.0.0/8")', "prefix length out of range"),
    ],
)
def test_an_address_kubernetes_refuses_is_an_error(
    evaluator: CelSelectorEvaluator, expression: str, reason: str
) -> None:
    with pytest.raises(SelectorError, match=reason):
        holds(evaluator, expression)


def test_an_address_result_is_named_as_kubernetes_names_it(
    evaluator: CelSelectorEvaluator,
) -> None:
    assert evaluator.compile_error(expression='ip("1.2.3.4")') == "result is net.IP, not bool"
    assert evaluator.compile_error(expression='cidr("::/0")') == "result is net.CIDR, not bool"
