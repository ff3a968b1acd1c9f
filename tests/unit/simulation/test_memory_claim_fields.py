"""The in-memory API server without DRAConsumableCapacity keeps claims as v1.34.3's does: a
request's or subrequest's `capacity` and a result's `shareID` and `consumedCapacity` dropped,
`distinctAttribute` kept (its drop loop assigns to a copy); with the gate on all are kept."""

from __future__ import annotations

from typing import Any

from npu_dra.adapters.cluster.memory import MemoryCluster

CAPACITY = {"requests": {"memCapacity": "8Gi"}}


def devices() -> dict[str, Any]:
    return {
        "requests": [
            {"name": "a", "exactly": {"deviceClassName": "npu", "capacity": CAPACITY}},
            {
                "name": "b",
                "firstAvailable": [{"name": "s", "deviceClassName": "npu", "capacity": CAPACITY}],
            },
        ],
        "constraints": [{"distinctAttribute": "npu.example/index"}],
    }


def claim() -> dict[str, Any]:
    result = {
        "request": "a",
        "driver": "npu.example",
        "pool": "p",
        "device": "npu-0",
        "shareID": "0d5f7e6a-1b7c-4c1e-9a51-2d8e4f3b6a10",
        "consumedCapacity": {"memCapacity": "8Gi"},
    }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "demo"},
        "spec": {"devices": devices()},
        "status": {"allocation": {"devices": {"results": [result]}}},
    }


def template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "demo"},
        "spec": {"spec": {"devices": devices()}},
    }


def test_without_the_gate_capacity_requests_and_shares_are_dropped() -> None:
    cluster = MemoryCluster(consumable=False)
    stored = cluster.create(claim())
    kept = stored["spec"]["devices"]
    assert "capacity" not in kept["requests"][0]["exactly"]
    assert "capacity" not in kept["requests"][1]["firstAvailable"][0]
    assert kept["constraints"] == [{"distinctAttribute": "npu.example/index"}]
    [result] = stored["status"]["allocation"]["devices"]["results"]
    assert set(result) == {"request", "driver", "pool", "device"}
    spec = cluster.create(template())["spec"]["spec"]["devices"]
    assert "capacity" not in spec["requests"][0]["exactly"]


def test_with_the_gate_they_are_kept() -> None:
    stored = MemoryCluster(consumable=True).create(claim())
    assert stored["spec"]["devices"]["requests"][0]["exactly"]["capacity"] == CAPACITY
    assert "shareID" in stored["status"]["allocation"]["devices"]["results"][0]
