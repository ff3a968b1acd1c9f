"""InventoryCache.prefetch: the first probe runs in the background, whoever asks meanwhile gets
its answer (one probe, not two), and a failed prefetch's error reaches the caller of current()."""

import threading

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import NodeName


class HeldProbe:
    """Fake hardware whose probes wait for `release` and can fail; it counts them."""

    def __init__(self, *, failing: bool = False) -> None:
        self.hardware = FakeHardware({"chip": "910B4", "count": 2}, node=NodeName("n"))
        self.release = threading.Event()
        self.failing = failing
        self.probes = 0

    def probe(self) -> NodeInventory:
        self.probes += 1
        assert self.release.wait(timeout=10)
        if self.failing:
            raise ProbeError("`npu-smi info` exited with status 1: dcmi init failed")
        return self.hardware.probe()


def test_current_waits_for_the_prefetched_probe_instead_of_probing_again() -> None:
    probe = HeldProbe()
    inventory = InventoryCache(probe)
    inventory.prefetch()
    answer: list[NodeInventory] = []
    asker = threading.Thread(target=lambda: answer.append(inventory.current()), daemon=True)
    asker.start()
    probe.release.set()
    asker.join(timeout=10)
    assert [len(a.devices) for a in answer] == [2]
    inventory.prefetch()  # a second call starts nothing
    assert probe.probes == 1


def test_a_failed_prefetch_is_the_error_of_the_next_current() -> None:
    probe = HeldProbe(failing=True)
    inventory = InventoryCache(probe)
    inventory.prefetch()
    probe.release.set()
    with pytest.raises(ProbeError, match="dcmi init failed"):
        inventory.current()
    assert probe.probes == 2  # the prefetch's, then the caller's own
