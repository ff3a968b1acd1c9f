"""ClassicHeldProbe: the node's chips less those the kubelet still holds for pods that got them
through a classic device plugin (adapters/kubelet_devices), so that a node moved from
`huawei.com/Ascend910` to DRA never offers a chip a running pod still uses. The chips come back
at the first probe after those pods have ended (every --health-interval). Which chips are left
out, and for which pods, is logged when it changes."""

import logging
from pathlib import Path

import attrs

from npu_dra.adapters.kubelet_devices import ClassicAllocations
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ports import HardwareProbe

log = logging.getLogger(__name__)


class ClassicHeldProbe:
    def __init__(self, probe: HardwareProbe, allocations: ClassicAllocations) -> None:
        self._probe, self._allocations = probe, allocations
        self._held: dict[int, str] = {}

    def probe(self) -> NodeInventory:
        inventory = self._probe.probe()
        held = self._allocations.held()
        if held != self._held:
            self._say(held)
            self._held = held
        if not held:
            return inventory
        kept = tuple(d for d in inventory.devices if d.physical_id not in held)
        return attrs.evolve(inventory, devices=kept)

    def _say(self, held: dict[int, str]) -> None:
        if not held:
            log.info("no chip is held for classic device plugin pods any more: all published")
            return
        chips = ", ".join(f"npu-{chip} (pod {uid})" for chip, uid in sorted(held.items()))
        log.warning(
            "left out of the pool until their pods end: %s, held by the kubelet for pods of a "
            "classic device plugin",
            chips,
        )


def classic_held_probe(probe: HardwareProbe, kubelet_dir: Path) -> HardwareProbe:
    """`probe` less the chips held for classic pods under `kubelet_dir` (the kubelet's root)."""
    return ClassicHeldProbe(probe, ClassicAllocations(kubelet_dir))
