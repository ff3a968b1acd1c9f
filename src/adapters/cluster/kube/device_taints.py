"""Whether the API server keeps `devices[].taints` on ResourceSlices (KEP-5055).

The field is in every v1.34+ schema, but a server with the DRADeviceTaints gate off drops it on
write without an error. So the question is asked the only way that tells: a dry-run create of a
one-device slice of this node's pool carrying a taint, and a look at what the server would have
stored. Nothing is stored (dryRun=All); the request passes the same RBAC and admission policy as
a real publish, so a plugin allowed to publish is allowed to ask.
"""

import functools
import json
from typing import Any

from kubernetes import client

from npu_dra.adapters.cluster.kube.cluster import single_try
from npu_dra.adapters.cluster.kube.raw import RawResourceApi
from npu_dra.adapters.cluster.kube.retry import Deadline, with_retries
from npu_dra.adapters.kube_shapes.slices import API_VERSION
from npu_dra.domain.ids import DriverName, NodeName

PROBE_DEVICE = "taint-probe"


def probe_slice(node: NodeName, driver: DriverName) -> dict[str, Any]:
    taint = {"key": f"{driver}/probe", "value": "probe", "effect": "NoSchedule"}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"generateName": f"{node}-{driver}-taint-probe-"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
            "devices": [{"name": PROBE_DEVICE, "taints": [taint]}],
        },
    }


def keeps_taints(stored: dict[str, Any]) -> bool:
    devices = stored.get("spec", {}).get("devices") or []
    return any(d.get("name") == PROBE_DEVICE and d.get("taints") for d in devices)


class KubeDeviceTaintSupport:
    def __init__(self, api: client.ApiClient, *, retry_budget_s: float = 30.0) -> None:
        self._api = single_try(api)
        self._budget = retry_budget_s

    @functools.cached_property
    def _resource(self) -> RawResourceApi:  # not ResourceV1Api: its models cost ~6 MiB
        return RawResourceApi(self._api)

    def serves_device_taints(self, *, node: NodeName, driver: DriverName) -> bool:
        def ask(deadline: Deadline) -> bool:
            response = self._resource.create_resource_slice(
                probe_slice(node, driver), dry_run="All", _request_timeout=deadline.timeout()
            )
            stored: dict[str, Any] = json.loads(response.data)
            return keeps_taints(stored)

        return with_retries(
            f"asking whether the API server serves device taints ({node}/{driver})",
            ask,
            budget_s=self._budget,
        )
