"""The start-up question to the API server: does it keep a multi-allocatable device? A dry-run
create in pool "<node>-probe", and a look at what it would have stored."""

import json
from typing import Any

import pytest
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.consumable_probe import serves_consumable_capacity
from npu_dra.domain.ids import DriverName, NodeName


class Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body).encode()


class FakeResourceApi:
    """A server's answer to dry-run creates: `drop` the consumable-capacity fields (the gate
    off), or `refuse` the slice; records what it was sent and how."""

    def __init__(self, *, drop: bool = False, refuse: int | None = None) -> None:
        self.drop, self.refuse = drop, refuse
        self.sent: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def create_resource_slice(self, body: dict[str, Any], **options: Any) -> Response:
        self.sent.append((body, options))
        if self.refuse is not None:
            raise ApiException(status=self.refuse, reason="refused")
        stored = json.loads(json.dumps(body))
        if self.drop:
            for device in stored["spec"]["devices"]:
                device.pop("allowMultipleAllocations", None)
                for capacity in device.get("capacity", {}).values():
                    capacity.pop("requestPolicy", None)
        return Response(stored)


def ask(api: FakeResourceApi) -> bool:
    return serves_consumable_capacity(api, node=NodeName("n"), driver=DriverName("d.x"), timeout=5)


@pytest.mark.parametrize(
    ("api", "served"),
    [(FakeResourceApi(), True), (FakeResourceApi(drop=True), False)],
    ids=["gate-on", "gate-off"],
)
def test_the_probe_says_whether_the_server_keeps_the_fields(
    api: FakeResourceApi, served: bool
) -> None:
    assert ask(api) is served
    [(body, options)] = api.sent
    assert options["dry_run"] == "All"
    assert body["spec"]["pool"]["name"] == "n-probe"
    assert (body["spec"]["nodeName"], body["spec"]["driver"]) == ("n", "d.x")
    [device] = body["spec"]["devices"]
    assert device["allowMultipleAllocations"] is True


def test_a_server_that_refuses_the_shape_does_not_serve_it() -> None:
    assert ask(FakeResourceApi(refuse=422)) is False


def test_other_api_errors_propagate() -> None:
    with pytest.raises(ApiException):
        ask(FakeResourceApi(refuse=503))
