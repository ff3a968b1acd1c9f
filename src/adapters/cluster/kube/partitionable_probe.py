"""Does this API server keep partitionable-device fields? A dry-run create tells.

A server without DRAPartitionableDevices (1.34 with the gate off) accepts a ResourceSlice with
`sharedCounters` and silently drops the field; publishing counters there would make every sync
see a difference and rewrite the pool forever, and partitions the scheduler cannot account for.
So, once at start: create (dryRun=All, nothing is stored) a slice with one counter set and one
device consuming it, and see whether both come back; a server that refuses that shape (1.35+
wants counter sets in slices of their own) is asked to keep a counters-only slice instead.
"""

import json
from typing import Any

from kubernetes.client import ApiException

from npu_dra.adapters.kube_shapes.slices import API_VERSION
from npu_dra.domain.ids import DriverName, NodeName

PROBE_SET = "npu-dra-probe"


SAME_SLICE = "same-slice"  # 1.34: counter sets beside the devices consuming them
APART = "apart"  # 1.35+: counter sets in slices of their own


def probe_slice(node: NodeName, driver: DriverName, *, apart: bool) -> dict[str, Any]:
    counters = {"probe": {"value": "1"}}
    spec: dict[str, Any] = {
        "driver": driver,
        "nodeName": node,
        "pool": {"name": f"{node}-probe", "generation": 0, "resourceSliceCount": 2},
        "sharedCounters": [{"name": PROBE_SET, "counters": counters}],
    }
    if not apart:
        spec["devices"] = [
            {"name": "probe", "consumesCounters": [{"counterSet": PROBE_SET, "counters": counters}]}
        ]
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"generateName": f"{node}-{driver}-probe-"},
        "spec": spec,
    }


def counter_layout(
    resource_api: Any, *, node: NodeName, driver: DriverName, timeout: float
) -> str | None:
    """Which layout the server keeps counters in; None if it drops or refuses them."""
    for layout in (SAME_SLICE, APART):
        try:
            response = resource_api.create_resource_slice(
                probe_slice(node, driver, apart=layout == APART),
                dry_run="All",
                _preload_content=False,
                _request_timeout=timeout,
            )
        except ApiException as error:
            if error.status in (400, 422):  # this shape is invalid here: try the other
                continue
            raise
        spec = json.loads(response.data).get("spec", {})
        devices = spec.get("devices") or [{}]
        kept = bool(spec.get("sharedCounters"))
        return layout if kept and (layout == APART or devices[0].get("consumesCounters")) else None
    return None
