"""The allocator copies configs into each allocation as kube-scheduler does (Allocate()'s
"Populate configs", k8s.io/dynamic-resource-allocation/structured v0.34.3): the class configs of
what each request got, once per class naming every request it served, then the claim's, an
entry naming requests once per request it names."""

import json

from npu_dra.domain.claims import (
    Allocation,
    ClaimRef,
    ClaimSpec,
    ConfigSource,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    OpaqueConfig,
    ResourceClaim,
)
from npu_dra.domain.ids import ClaimName, ClaimUID, DeviceClassName, DriverName, Namespace
from npu_dra.domain.ids import RequestName as R
from tests.support.allocation import allocate
from tests.unit.domain.test_allocation import FakeSelectors, node

DRIVER = DriverName("npu.huawei.com")
SELECT = ('device.driver == "npu.huawei.com"',)
CLASS, CLAIM = ConfigSource.CLASS, ConfigSource.CLAIM


def opaque(tag: str, source: ConfigSource, *requests: str) -> OpaqueConfig:
    return OpaqueConfig(source, DRIVER, f'{{"tag":"{tag}"}}', tuple(R(r) for r in requests))


def device_class(name: str, *tags: str) -> DeviceClass:
    return DeviceClass(DeviceClassName(name), SELECT, tuple(opaque(t, CLASS) for t in tags))


CLASSES = {c.name: c for c in (device_class("npu", "c1", "c2"), device_class("small", "s1"))}


def allocated(*requests: DeviceRequest, config: tuple[OpaqueConfig, ...] = ()) -> Allocation:
    ref = ClaimRef(Namespace("demo"), ClaimName("claim"), ClaimUID("uid-1"))
    found = allocate(
        ResourceClaim(ref, ClaimSpec(requests, config=config)),
        slices=node("node-a"),
        classes=CLASSES,
        in_use=frozenset(),
        evaluator=FakeSelectors(),
    )
    assert isinstance(found, Allocation), found
    return found


def tags(allocation: Allocation) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (json.loads(c.parameters)["tag"], c.source.value, c.requests) for c in allocation.config
    ]


def exactly(name: str, device_class: str = "npu") -> DeviceRequest:
    return DeviceRequest(R(name), DeviceClassName(device_class))


def test_class_configs_come_once_per_class_naming_each_request_then_the_claims() -> None:
    claim_config = (
        opaque("all", CLAIM),
        opaque("both", CLAIM, "a", "b"),
        opaque("only-b", CLAIM, "b"),
        opaque("none", CLAIM, "zzz"),
    )
    found = allocated(exactly("a"), exactly("b"), config=claim_config)
    assert tags(found) == [
        ("c1", "FromClass", ("a", "b")),
        ("c2", "FromClass", ("a", "b")),
        ("all", "FromClaim", ()),
        ("both", "FromClaim", ("a", "b")),
        ("both", "FromClaim", ("a", "b")),  # once per request it names, as the scheduler does
        ("only-b", "FromClaim", ("b",)),
    ]


def test_a_first_available_request_gets_its_chosen_subrequests_class_and_entries() -> None:
    request = DeviceRequest(
        R("npu"),
        DeviceClassName(""),
        first_available=(
            DeviceSubRequest(R("big"), DeviceClassName("npu"), count=9),  # 8 chips: never fits
            DeviceSubRequest(R("small"), DeviceClassName("small")),
        ),
    )
    claim_config = (
        opaque("parent", CLAIM, "npu"),
        opaque("chosen", CLAIM, "npu/small"),
        opaque("not-chosen", CLAIM, "npu/big"),
    )
    found = allocated(request, config=claim_config)
    assert [r.request for r in found.results] == ["npu/small"]
    assert tags(found) == [
        ("s1", "FromClass", ("npu/small",)),
        ("parent", "FromClaim", ("npu",)),
        ("chosen", "FromClaim", ("npu/small",)),
    ]


def test_no_config_anywhere_copies_none() -> None:
    plain = {DeviceClassName("npu"): DeviceClass(DeviceClassName("npu"), SELECT)}
    ref = ClaimRef(Namespace("demo"), ClaimName("claim"), ClaimUID("uid-1"))
    found = allocate(
        ResourceClaim(ref, ClaimSpec((exactly("a"),))),
        slices=node("node-a"),
        classes=plain,
        in_use=frozenset(),
        evaluator=FakeSelectors(),
    )
    assert isinstance(found, Allocation)
    assert found.config == ()
