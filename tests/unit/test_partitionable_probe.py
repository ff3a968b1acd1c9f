"""The start-up probe of the API server: which counter layout it keeps, by dry-run creates."""

import json
from typing import Any

import pytest
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.partitionable_probe import counter_layout
from npu_dra.domain.ids import DriverName, NodeName


class Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body).encode()


class FakeResourceApi:
    """A server's answer to dry-run creates: `refuse` the same-slice shape (1.35+), `drop` the
    counter fields (gate off); records what it was sent."""

    def __init__(self, *, refuse_same_slice: bool = False, drop: bool = False) -> None:
        self.refuse_same_slice = refuse_same_slice
        self.drop = drop
        self.sent: list[dict[str, Any]] = []

    def create_resource_slice(self, body: dict[str, Any], **options: Any) -> Response:
        assert options["dry_run"] == "All"
        self.sent.append(body)
        spec = dict(body["spec"])
        if self.refuse_same_slice and spec.get("devices") and spec.get("sharedCounters"):
            raise ApiException(status=422, reason="Unprocessable Entity")
        if self.drop:
            spec.pop("sharedCounters", None)
            spec["devices"] = [{"name": d["name"]} for d in spec.get("devices") or []]
        return Response({**body, "spec": spec})


@pytest.mark.parametrize(
    ("api", "expected"),
    [
        (FakeResourceApi(), "same-slice"),
        (FakeResourceApi(refuse_same_slice=True), "apart"),
        (FakeResourceApi(drop=True), None),
        (FakeResourceApi(refuse_same_slice=True, drop=True), None),
    ],
    ids=["1.34-gate-on", "1.35+", "gate-off", "1.35+-gate-off"],
)
def test_the_probe_finds_the_layout_the_server_keeps(
    api: FakeResourceApi, expected: str | None
) -> None:
    layout = counter_layout(api, node=NodeName("n"), driver=DriverName("d.x"), timeout=5)
    assert layout == expected
    assert all(body["spec"]["nodeName"] == "n" for body in api.sent)


def test_other_api_errors_propagate() -> None:
    class Down:
        def create_resource_slice(self, body: dict[str, Any], **options: Any) -> Response:
            raise ApiException(status=503, reason="Service Unavailable")

    with pytest.raises(ApiException):
        counter_layout(Down(), node=NodeName("n"), driver=DriverName("d.x"), timeout=5)
