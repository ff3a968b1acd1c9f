"""Allocation results survive the trip through the API shape, shared allocations included."""

from npu_dra.adapters.kube_shapes.claims import allocation_from_api, allocation_to_api
from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.claims import Allocation, AllocationResult
from npu_dra.domain.ids import DeviceName, DriverName, NodeName, PoolName, RequestName

SHARE = "123e4567-e89b-12d3-a456-426614174000"


def result(device: str, **changes: object) -> AllocationResult:
    return AllocationResult(
        RequestName("npu"),
        DriverName("npu.huawei.com"),
        PoolName("node-a"),
        DeviceName(device),
        **changes,  # type: ignore[arg-type]
    )


def test_share_id_and_admin_access_round_trip_through_the_api_shape() -> None:
    allocation = Allocation(
        (result("npu-0", share_id=SHARE), result("npu-1", admin_access=True), result("npu-2")),
        NodeName("node-a"),
    )

    body = allocation_to_api(allocation)

    assert body["devices"]["results"][0]["shareID"] == SHARE
    assert "shareID" not in body["devices"]["results"][2]
    assert allocation_from_api(Fields(body, obj="ResourceClaim x")) == allocation
