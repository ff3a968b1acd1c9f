"""Does this API server keep consumable-capacity fields? A dry-run create tells.

A server without DRAConsumableCapacity (1.34 by default; beta and on in 1.36) accepts a
ResourceSlice whose device has `allowMultipleAllocations` and a capacity `requestPolicy`, and
silently drops both (kubernetes v1.36.3 pkg/registry/resource/resourceslice/strategy.go,
dropDisabledDRAConsumableCapacityFields). Publishing a shared chip that way there would offer it
to one claim only and make every sync see a difference. So, once, when some chip is shared:
create (dryRun=All, nothing is stored) a one-device slice in pool "<node>-probe", as the
partitionable-device probe does (deploy/manifests/30-resourceslice-policy.yaml lets dry runs
name that pool), and see whether both fields come back.
"""

import functools
import json
from typing import Any

from kubernetes import client
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.cluster import PROBE_BUDGET_S, single_try
from npu_dra.adapters.cluster.kube.raw import RawResourceApi
from npu_dra.adapters.cluster.kube.retry import Deadline, with_retries
from npu_dra.adapters.kube_shapes.slices import API_VERSION
from npu_dra.domain.ids import DriverName, NodeName

PROBE_DEVICE = "consumable-probe"
PROBE_CAPACITY = "probe"


def probe_slice(node: NodeName, driver: DriverName) -> dict[str, Any]:
    policy = {"default": "1", "validRange": {"min": "1", "step": "1"}}
    device = {
        "name": PROBE_DEVICE,
        "allowMultipleAllocations": True,
        "capacity": {PROBE_CAPACITY: {"value": "2", "requestPolicy": policy}},
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"generateName": f"{node}-{driver}-probe-"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": f"{node}-probe", "generation": 0, "resourceSliceCount": 1},
            "devices": [device],
        },
    }


def keeps_consumable_capacity(stored: dict[str, Any]) -> bool:
    devices = stored.get("spec", {}).get("devices") or [{}]
    device = devices[0]
    capacity = (device.get("capacity") or {}).get(PROBE_CAPACITY) or {}
    return device.get("allowMultipleAllocations") is True and bool(capacity.get("requestPolicy"))


def serves_consumable_capacity(
    resource_api: Any, *, node: NodeName, driver: DriverName, timeout: float
) -> bool:
    """Whether the server keeps a multi-allocatable device; False where it drops the fields or
    refuses the shape as invalid (a server that cannot take it cannot serve it either)."""
    try:
        response = resource_api.create_resource_slice(
            probe_slice(node, driver),
            dry_run="All",
            _preload_content=False,
            _request_timeout=timeout,
        )
    except ApiException as error:
        if error.status in (400, 422):
            return False
        raise
    return keeps_consumable_capacity(json.loads(response.data))


class KubeConsumableCapacity:
    """The question above, asked of the API server (retried within PROBE_BUDGET_S)."""

    def __init__(self, api: client.ApiClient, *, budget_s: float = PROBE_BUDGET_S) -> None:
        self._api = single_try(api)
        self._budget = budget_s

    @functools.cached_property
    def _resource(self) -> RawResourceApi:  # not ResourceV1Api: its models cost ~6 MiB
        return RawResourceApi(self._api)

    def serves_consumable_capacity(self, *, node: NodeName, driver: DriverName) -> bool:
        def ask(deadline: Deadline) -> bool:
            return serves_consumable_capacity(
                self._resource, node=node, driver=driver, timeout=deadline.timeout()
            )

        return with_retries(
            f"asking whether the API server serves consumable capacity ({node}/{driver})",
            ask,
            budget_s=self._budget,
        )
