"""Does this API server keep partitionable-device fields? A dry-run create tells.

A server without DRAPartitionableDevices (1.34 with the gate off) accepts a ResourceSlice with
`sharedCounters` and silently drops the field; publishing counters there would make every sync
see a difference and rewrite the pool forever, and partitions the scheduler cannot account for.
So, once at start: create (dryRun=All, nothing is stored) a slice with one counter set and one
device consuming it, and see whether both come back.
"""

import json
from typing import Any

from kubernetes.client import ApiException

from npu_dra.adapters.kube_shapes.slices import API_VERSION
from npu_dra.domain.ids import DriverName, NodeName

PROBE_SET = "npu-dra-probe"


def probe_slice(node: NodeName, driver: DriverName) -> dict[str, Any]:
    counters = {"probe": {"value": "1"}}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"generateName": f"{node}-{driver}-probe-"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": f"{node}-probe", "generation": 0, "resourceSliceCount": 1},
            "sharedCounters": [{"name": PROBE_SET, "counters": counters}],
            "devices": [
                {
                    "name": "probe",
                    "consumesCounters": [{"counterSet": PROBE_SET, "counters": counters}],
                }
            ],
        },
    }


def counters_kept(resource_api: Any, *, node: NodeName, driver: DriverName, timeout: float) -> bool:
    """True if the server stores counters; False if it drops or refuses them."""
    try:
        response = resource_api.create_resource_slice(
            probe_slice(node, driver),
            dry_run="All",
            _preload_content=False,
            _request_timeout=timeout,
        )
    except ApiException as error:
        if error.status in (400, 422):  # a server that knows the fields, but not this shape
            return False
        raise
    spec = json.loads(response.data).get("spec", {})
    devices = spec.get("devices") or [{}]
    return bool(spec.get("sharedCounters")) and bool(devices[0].get("consumesCounters"))
