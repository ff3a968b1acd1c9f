"""A chip published in its held shares' form goes back to the flags' form once they are
released, without a restart or a hardware change: the maintainer's interval tick sees the
held form differ from what it published and republishes (app/services/chip_sharing/forms.py, #44).

Over the in-memory API server and fake hardware; the prepared claims are the test's checkpoint.
"""

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.chip_sharing.forms import SharingForms
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.maintainer import PoolMaintainer
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.checkpoint import Checkpoint, PreparedClaim, PreparedDevice
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
)
from tests.support.controlplane import wait_for

DRIVER, NODE = DriverName("npu.huawei.com"), NodeName("node-a")


class Held:
    """The preparer's checkpoint, as the test sets it."""

    def __init__(self, checkpoint: Checkpoint) -> None:
        self.checkpoint = checkpoint

    def prepared(self) -> Checkpoint:
        return self.checkpoint


def quarter_held() -> Checkpoint:
    """npu-0-share-0 of four held (a 910B4's quarter: 8192 MiB, 5 AI cores)."""
    uid = ClaimUID("c0")
    name = f"{uid}-npu-0-share-0-mem8192-aic5"
    device = PreparedDevice(
        (), PoolName(NODE), DeviceName("npu-0-share-0"), (f"k8s.npu.huawei.com/npu={name}",)
    )
    return Checkpoint().with_claim(
        PreparedClaim(ClaimRef(Namespace("ns"), ClaimName("c"), uid), (device,))
    )


def npu_0(cluster: MemoryCluster) -> list[str]:
    return sorted(
        d.name for s in cluster.list_slices() for d in s.devices if d.name.startswith("npu-0")
    )


def test_released_shares_give_the_chip_its_flags_form_at_the_next_tick() -> None:
    cluster, held = MemoryCluster(), Held(quarter_held())
    inventory = InventoryCache(FakeHardware({"chip": "910B4", "count": 2}, node=NODE))
    mode = SharingForms(
        chips=frozenset({DeviceName("npu-0")}), shares=8, support=None, driver=DRIVER, held=held
    )
    publisher = PoolPublisher(inventory=inventory, cluster=cluster, driver=DRIVER, sharing=mode)
    worker = PoolMaintainer(inventory=inventory, publisher=publisher, interval_s=0.01)
    worker.start()
    try:
        assert worker.wait_published(timeout=30)
        assert npu_0(cluster) == [f"npu-0-share-{i}" for i in range(4)]
        held.checkpoint = Checkpoint()  # the share is released
        eight = [f"npu-0-share-{i}" for i in range(8)]
        wait_for(lambda: npu_0(cluster) == eight, timeout=30, what="npu-0 in its 8 shares")
    finally:
        worker.stop()
