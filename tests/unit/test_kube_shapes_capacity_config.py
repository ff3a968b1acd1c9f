"""The consumable-capacity and opaque-config fields of resource.k8s.io/v1, read and written back."""

import json

import pytest

from npu_dra.adapters.kube_shapes.claims import (
    allocation_to_api,
    claim_from_api,
    device_class_from_api,
)
from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.adapters.kube_shapes.slices import device_from_api, device_to_api
from npu_dra.domain.claims import ConfigSource
from npu_dra.domain.quantity import Quantity

SHARED_DEVICE = {
    "name": "npu-0",
    "allowMultipleAllocations": True,
    "capacity": {
        "memory": {
            "value": "32Gi",
            "requestPolicy": {"default": "32Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
        },
        "aiCore": {"value": "20", "requestPolicy": {"validValues": ["1", "2", "4"]}},
        "plain": {"value": "3"},
    },
}


def test_a_multi_allocatable_device_round_trips_with_its_request_policies() -> None:
    device = device_from_api(Fields(SHARED_DEVICE, obj="slice"))
    assert device.allow_multiple_allocations
    memory = device.request_policies["memory"]
    assert memory.default == Quantity.parse("32Gi")
    assert memory.valid_range is not None
    assert memory.valid_range.step == Quantity.parse("1Gi")
    assert device.request_policies["aiCore"].valid_values == tuple(
        Quantity.parse(v) for v in ("1", "2", "4")
    )
    assert "plain" not in device.request_policies
    assert device_to_api(device) == SHARED_DEVICE


def test_a_range_without_min_is_refused_naming_the_field() -> None:
    bad = {
        "name": "npu-0",
        "capacity": {"memory": {"value": "1Gi", "requestPolicy": {"validRange": {}}}},
    }
    with pytest.raises(ShapeError, match=r"capacity\.memory\.requestPolicy\.validRange\.min"):
        device_from_api(Fields(bad, obj="slice"))


def _claim(config: list[object], status: dict[str, object] | None = None) -> dict[str, object]:
    return {
        "metadata": {"name": "c", "namespace": "ns", "uid": "u-1"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "npu",
                        "exactly": {
                            "deviceClassName": "npu.huawei.com",
                            "capacity": {"requests": {"memory": "8Gi"}},
                        },
                    }
                ],
                "config": config,
            }
        },
        **({"status": status} if status else {}),
    }


OURS = {
    "driver": "npu.huawei.com",
    "parameters": {"kind": "NpuConfig", "sharing": {"strategy": "Shared"}},
}


def test_claim_config_capacity_requests_and_allocation_config_are_read() -> None:
    allocation = {
        "devices": {
            "results": [
                {"request": "npu", "driver": "npu.huawei.com", "pool": "n", "device": "npu-0",
                 "shareID": "s-1", "consumedCapacity": {"memory": "8Gi"}}
            ],
            "config": [
                {"source": "FromClass", "opaque": OURS},
                {"source": "FromClaim", "requests": ["npu"], "opaque": OURS},
            ],
        }
    }  # fmt: skip
    claim = claim_from_api(
        _claim([{"requests": ["npu"], "opaque": OURS}], {"allocation": allocation})
    )
    (request,) = claim.spec.requests
    assert request.capacity == (("memory", Quantity.parse("8Gi")),)
    (entry,) = claim.spec.config
    assert entry.source is ConfigSource.CLAIM
    assert entry.requests == ("npu",)
    assert json.loads(entry.parameters) == OURS["parameters"]
    assert claim.allocation is not None
    assert [c.source for c in claim.allocation.config] == [ConfigSource.CLASS, ConfigSource.CLAIM]
    assert claim.allocation.results[0].consumed_capacity == (("memory", Quantity.parse("8Gi")),)
    assert allocation_to_api(claim.allocation)["devices"] == allocation["devices"]


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ([{"requests": ["gpu"], "opaque": OURS}], r"config\[0\]\.requests\[0\]"),
        ([{"opaque": {"driver": "npu.huawei.com"}}], r"config\[0\]\.opaque\.parameters"),
        ([{}], r"config\[0\]\.opaque"),
        ([{"opaque": {"driver": "d", "parameters": {"x": "y" * 11000}}}], r"at most 10240 bytes"),
    ],
)
def test_a_bad_config_entry_is_refused_naming_it(config: list[object], field: str) -> None:
    with pytest.raises(ShapeError, match=field):
        claim_from_api(_claim(config))


def test_parsed_parameters_are_bounded_as_the_api_server_bounds_them() -> None:
    """In UTF-8 bytes, as sent: 1,800 characters of two bytes each are 3.6 KB (as \\u escapes
    they were counted as 10.8 KB, over the 10 KiB the API server allows)."""
    parameters = {"note": "é" * 1800}
    claim = claim_from_api(_claim([{"opaque": {"driver": "d", "parameters": parameters}}]))
    (entry,) = claim.spec.config
    assert json.loads(entry.parameters) == parameters


def test_a_device_class_config_is_from_the_class() -> None:
    cls = device_class_from_api({"metadata": {"name": "k"}, "spec": {"config": [{"opaque": OURS}]}})
    assert [c.source for c in cls.config] == [ConfigSource.CLASS]
