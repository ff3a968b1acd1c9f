"""`device.attributes` and `device.capacity` as whole maps count only the domains the device has,
as in Kubernetes, where they hold a domain only once an attribute names it and a lookup of any
other answers an empty map (k8s.io/dynamic-resource-allocation v0.34.3 cel/compile.go
`DeviceMatches`, `newStringInterfaceMapWithDefault`). Here a lookup of a domain the expression
names still answers an empty map."""

import pytest

from npu_dra.adapters.cel.evaluator import CelSelectorEvaluator
from npu_dra.domain.ids import DriverName
from npu_dra.domain.quantity import Quantity
from npu_dra.domain.scheduling.selectors import SelectorDevice

DEVICE = SelectorDevice(
    DriverName("npu.huawei.com"),
    {"npu.huawei.com": {"index": 3}},
    {"npu.huawei.com": {"memory": Quantity.parse("64Gi")}},
)


@pytest.mark.parametrize(
    "expression",
    [
        'size(device.attributes) == 1 && size(device.attributes["other.example.com"]) == 0',
        'device.attributes.size() == 1 && !("other.example.com" in device.attributes)',
        'device.attributes.all(d, d == "npu.huawei.com") && '
        'size(device.attributes["other.example.com"]) == 0',
        'size(device.capacity) == 1 && size(device.capacity["other.example.com"]) == 0',
        'device.attributes["npu.huawei.com"].index == 3',
    ],
)
def test_whole_maps_hold_only_the_devices_domains(expression: str) -> None:
    assert CelSelectorEvaluator().matches(expression=expression, device=DEVICE)


def test_a_string_that_mentions_the_map_is_left_alone() -> None:
    expression = '"device.attributes" == "device.attributes" && size(device.attributes) == 1'
    assert CelSelectorEvaluator().matches(expression=expression, device=DEVICE)


def test_a_field_test_of_the_map_is_left_alone() -> None:
    expression = "has(device.attributes) && has( device.capacity) && size(device.attributes) == 1"
    assert CelSelectorEvaluator().matches(expression=expression, device=DEVICE)
