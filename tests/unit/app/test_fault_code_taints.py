"""A chip's error codes through the publisher onto the slice: SeparateNPU taints NoExecute,
RestartBusiness NoSchedule, and recovery (the codes cleared) takes the taint away."""

from __future__ import annotations

from pathlib import Path

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.app.services.device_taints import TaintMode
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.device_taints import TaintPolicy
from npu_dra.domain.ids import DriverName, NodeName
from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")


class Support:
    def serves_device_taints(self, *, node: NodeName, driver: DriverName) -> bool:
        return True


def health_text(word: str, codes: str) -> str:
    return (
        f"\tHealth Status                  : {word}\n\tError Code                     : {codes}\n"
    )


def fault(smi: FakeNpuSmi, card: int, word: str, codes: str) -> None:
    smi.set_health(card, word)
    args = ["info", "-t", "health", "-i", str(card), "-c", "0"]
    smi.set_answer(args, stdout=health_text(word, codes))


def published(cluster: MemoryCluster) -> dict[str, list[str]]:
    return {
        d.name: [f"{t.value}:{t.effect.value}" for t in d.taints]
        for s in cluster.list_slices(node=NODE)
        for d in s.devices
        if d.name in ("npu-1", "npu-2", "npu-3")
    }


def test_fault_codes_taint_by_their_level_and_recovery_clears_them(tmp_path: Path) -> None:
    smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "npu-smi")
    probe = NpuSmiProbe(
        node=NODE,
        npu_smi=smi.path,
        sysfs_root=make_sysfs(tmp_path / "sys"),
        dev_root=make_dev_root(tmp_path / "dev", range(smi.davinci_count)),
    )
    cluster = MemoryCluster(device_taints=True)
    mode = TaintMode(policy=TaintPolicy(), support=Support(), driver=DRIVER)
    pool = PoolPublisher(
        inventory=InventoryCache(probe), cluster=cluster, driver=DRIVER, taints=mode
    )
    fault(smi, 1, "Alarm", "80E18402")  # SeparateNPU
    fault(smi, 2, "Alarm", "81078603")  # NotHandleFault: no taint, though npu-smi says Alarm
    fault(smi, 3, "Warning", "A2301001")  # RestartBusiness and SeparateNPU: the more severe
    pool.publish()
    assert published(cluster) == {
        "npu-1": ["Critical:NoExecute"],
        "npu-2": [],
        "npu-3": ["Critical:NoExecute"],
    }
    for card in (1, 2, 3):
        fault(smi, card, "OK", "NA")
    pool.publish()
    assert published(cluster) == {"npu-1": [], "npu-2": [], "npu-3": []}
