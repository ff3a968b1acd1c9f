"""A scenario's SimulatedNode objects: the node's fake hardware, which must build now rather than
halfway through the run, what the scheduler's node filters and scores see of it (labels,
taints, allocatable), and which of its chips are shared (`sharedChips`, `chipShares`: the
syntax of the kubelet plugin's --shared-chips and --chip-shares).
"""

from collections.abc import Mapping
from typing import Any

import attrs

from npu_dra.adapters.hardware.choose import fake_probe
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.nvml.fake import is_gpu_description
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.adapters.simulation_files.scenario_placement import node_labels, node_taints
from npu_dra.adapters.simulation_files.scenario_resources import simulated_allocatable
from npu_dra.domain.chip_sharing.policy import (
    SharingSyntaxError,
    parse_chip_shares,
    parse_shared_chips,
)
from npu_dra.domain.ids import NodeName
from npu_dra.domain.scheduling.placement import SchedNode


@attrs.frozen
class NodeSharing:
    """A SimulatedNode's `sharedChips` and `chipShares`, checked; None where unset (simulate's
    --shared-chips and --chip-shares apply there)."""

    chips: str | None = None
    shares: int | None = None

    def settings(self) -> dict[str, Any]:
        """The node's own values as changes to simulate's settings (its flags elsewhere)."""
        changes: dict[str, Any] = {}
        if self.chips is not None:
            changes["shared_chips"] = parse_shared_chips(self.chips)
        if self.shares is not None:
            changes["chip_shares"] = self.shares
        return changes


def node_sharing(spec: Fields) -> NodeSharing:
    chips, shares = spec.opt("sharedChips", str), spec.opt("chipShares", int)
    try:
        if chips is not None:
            parse_shared_chips(chips)
    except SharingSyntaxError as error:
        raise spec.fail("sharedChips", str(error)) from error
    try:
        if shares is not None:
            parse_chip_shares(str(shares))
    except SharingSyntaxError as error:
        raise spec.fail("chipShares", str(error)) from error
    return NodeSharing(chips, shares)


def simulated_node(
    doc: Mapping[str, Any],
) -> tuple[NodeName, Mapping[str, Any], SchedNode, NodeSharing]:
    """The node's name, its hardware description, its scheduling view and its shared chips."""
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
    sharing = node_sharing(root.sub("spec"))
    return NodeName(name), hardware, SchedNode(name, labels, taints, allocatable), sharing
