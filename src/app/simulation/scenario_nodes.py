"""A scenario's SimulatedNode objects: the node's fake hardware, which must build now rather than
halfway through the run, and what the scheduler's node filters and scores see of it (labels,
taints, allocatable).
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.hardware.choose import fake_probe
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.nvml.fake import is_gpu_description
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.app.simulation.scenario_placement import node_labels, node_taints
from npu_dra.app.simulation.scenario_resources import simulated_allocatable
from npu_dra.domain.ids import NodeName
from npu_dra.domain.scheduling.placement import SchedNode


def simulated_node(doc: Mapping[str, Any]) -> tuple[NodeName, Mapping[str, Any], SchedNode]:
    """The node's name, its hardware description and its scheduling view."""
    root = Fields(doc, obj=describe(doc))
    name = root.sub("metadata").need("name", str)
    hardware = root.sub("spec").need("hardware", dict)
    if not is_gpu_description(hardware) and "chip" not in hardware:
        raise (
            root.sub("spec")
            .sub("hardware")
            .fail("chip", "is required (an Ascend node), or gpu: for an NVIDIA node")
        )
    if "nvidiaSmiXml" not in hardware:
        root.sub("spec").sub("hardware").need("count", int)
    try:  # the node's fake hardware must build now, not halfway through the run
        fake_probe(hardware, node=NodeName(name)).probe()
    except ProbeError as error:
        raise root.sub("spec").fail("hardware", str(error)) from error
    labels = node_labels(name, root.sub("metadata"))
    taints = node_taints(root.sub("spec"))
    allocatable = simulated_allocatable(root.sub("spec"))
    return NodeName(name), hardware, SchedNode(name, labels, taints, allocatable)
