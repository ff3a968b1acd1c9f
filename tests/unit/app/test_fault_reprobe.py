"""Hardware that announces faults gets re-probed at once, not at the next --health-interval:
the pool maintainer subscribes the hardware's announcements to `request_probe`."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer, maintained_pool
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.pool import ResourceSlice
from tests.support.controlplane import wait_for

NODE = NodeName("n")


class AnnouncingHardware:
    """Fake chips whose first device turns Critical when `fail()` announces it."""

    def __init__(self) -> None:
        self._fake = FakeHardware({"chip": "910B4", "count": 2}, node=NODE)
        self.failed = False
        self.probes = 0
        self.on_fault: Callable[[], None] | None = None

    def probe(self) -> NodeInventory:
        self.probes += 1
        inventory = self._fake.probe()
        if not self.failed:
            return inventory
        first = attrs.evolve(inventory.devices[0], health=Health.CRITICAL)
        return attrs.evolve(inventory, devices=(first, *inventory.devices[1:]))

    def subscribe_faults(self, on_fault: Callable[[], None]) -> bool:
        self.on_fault = on_fault
        return True

    def fail(self) -> None:
        self.failed = True
        assert self.on_fault is not None
        self.on_fault()


class CountingPublisher:
    def __init__(self, inventory: InventoryCache) -> None:
        self.inventory = inventory
        self.published: list[NodeInventory] = []

    def publish(self, *, refresh: bool = True) -> tuple[ResourceSlice, ...]:
        self.published.append(self.inventory.current())
        return ()

    def sharing_changed(self) -> bool:  # no chip is shared here
        return False


class NoWatch:
    def watch_slices(self, **_: object) -> NoWatch:
        return self

    def stop(self) -> None:
        pass


def test_an_announced_fault_is_probed_and_published_without_waiting_for_the_interval() -> None:
    hardware = AnnouncingHardware()
    inventory = InventoryCache(hardware)
    publisher = CountingPublisher(inventory)
    maintainer = PoolMaintainer(
        inventory=inventory,
        publisher=publisher,
        interval_s=3600.0,  # type: ignore[arg-type]
    )
    pool = maintained_pool(
        maintainer=maintainer, watcher=NoWatch(), node=NODE, driver=DriverName("d"),  # type: ignore[arg-type]
        hardware=hardware,
    )  # fmt: skip
    next(pool)
    try:
        assert maintainer.wait_published(timeout=10)
        assert hardware.on_fault is not None, "the maintainer did not subscribe"
        hardware.fail()
        wait_for(lambda: len(publisher.published) == 2, timeout=10, what="a second publish")
        assert publisher.published[-1].devices[0].health is Health.CRITICAL
    finally:
        pool.close()


def test_hardware_without_announcements_is_only_polled() -> None:
    fake = FakeHardware({"chip": "910B4", "count": 1}, node=NODE)
    inventory = InventoryCache(fake)
    maintainer = PoolMaintainer(
        inventory=inventory,
        publisher=CountingPublisher(inventory),
        interval_s=3600.0,  # type: ignore[arg-type]
    )
    asked: list[str] = []
    maintainer.request_probe = lambda: asked.append("probe")  # type: ignore[method-assign]
    pool = maintained_pool(
        maintainer=maintainer, watcher=NoWatch(), node=NODE, driver=DriverName("d"),  # type: ignore[arg-type]
        hardware=fake,
    )  # fmt: skip
    next(pool)
    pool.close()
    assert asked == []
