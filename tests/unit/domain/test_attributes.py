"""Attribute names and values are held to the ResourceSlice rules before anything is published."""

import pytest

from npu_dra.domain.attributes import (
    MAX_STRING_BYTES,
    Version,
    check_attribute_value,
    check_qualified_name,
    is_dns_label,
    is_dns_subdomain,
    qualify,
)
from npu_dra.domain.errors import InvalidName


@pytest.mark.parametrize(
    "name",
    [
        "numaNode",
        "npu.huawei.com/numaNode",
        "resource.kubernetes.io/pciBusID",
        "_private",
        "x" * 32,
        f"{'a' * 63}/x",
    ],
)
def test_qualified_names_that_slices_accept(name: str) -> None:
    assert check_qualified_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "1numa",
        "numa-node",
        "x" * 33,
        "a/b/c",
        "Npu.Huawei.com/numaNode",
        "npu.huawei.com/",
        f"{'a' * 64}/x",
        "-npu.com/x",
        "numaNode\n",
        "npu.huawei.com\n/numaNode",
    ],
)
def test_qualified_names_that_slices_reject(name: str) -> None:
    with pytest.raises(InvalidName, match="attribute name"):
        check_qualified_name(name)


def test_strings_are_limited_in_bytes_not_characters() -> None:
    assert check_attribute_value("s", "x" * MAX_STRING_BYTES) == "x" * MAX_STRING_BYTES
    assert check_attribute_value("s", "é" * (MAX_STRING_BYTES // 2))
    with pytest.raises(InvalidName, match="'s': string longer than 64 bytes"):
        check_attribute_value("s", "é" * (MAX_STRING_BYTES // 2 + 1))


@pytest.mark.parametrize("value", [2**63 - 1, -(2**63), 0, True, False])
def test_int64_and_bools_are_accepted(value: int) -> None:
    assert check_attribute_value("n", value) == value


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_ints_beyond_int64_are_rejected(value: int) -> None:
    with pytest.raises(InvalidName, match="int out of int64 range"):
        check_attribute_value("n", value)


@pytest.mark.parametrize("text", ["1.2.3", "0.0.0", "1.0.0-rc.1+build.5", "24.1.0-alpha-2"])
def test_strict_semantic_versions(text: str) -> None:
    assert Version(text).text == text


@pytest.mark.parametrize(
    "text",
    ["v1.2.3", "01.2.3", "1.2", "1.2.3.4", "1.2.3-01", "", "1.2.3\n", "1." + "1" * 70 + ".0"],
)
def test_loose_versions_are_rejected(text: str) -> None:
    with pytest.raises(InvalidName, match="not a strict semantic version"):
        Version(text)


def test_bare_names_belong_to_the_driver_and_qualified_ones_to_their_domain() -> None:
    assert qualify("numaNode", "npu.huawei.com") == ("npu.huawei.com", "numaNode")
    assert qualify("example.com/rack", "npu.huawei.com") == ("example.com", "rack")


@pytest.mark.parametrize(
    ("name", "label"),
    [("node-a", True), ("a" * 63, True), ("a" * 64, False), ("Node", False), ("a.b", False)],
)
def test_dns_labels(name: str, label: bool) -> None:
    assert is_dns_label(name) is label


@pytest.mark.parametrize("name", ["a\n", "node-a\n", "-a", "a-", ""])
def test_dns_labels_reject_stray_characters(name: str) -> None:
    assert not is_dns_label(name)
    assert not is_dns_subdomain(name)


def test_dns_subdomains_allow_dots_up_to_253() -> None:
    assert is_dns_subdomain("npu.huawei.com")
    assert is_dns_subdomain(".".join(["a" * 63] * 3) + "." + "a" * 61)
    assert not is_dns_subdomain(".".join(["a" * 63] * 4))
    assert not is_dns_subdomain("a..b")
