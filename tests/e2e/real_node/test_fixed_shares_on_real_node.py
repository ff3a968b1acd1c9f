"""Shared chips on the real v1.34.3 node with its default gates: the API server does not serve
consumable capacity, so `--shared-chips=npu-0 --chip-shares=2` publishes npu-0 as two share
devices (`npu-0-share-0`, `npu-0-share-1`) instead of the chip. Two pods each take one and both
run on npu-0's device node, told their half; a third waits with the scheduler's reason; a pod
asking any NPU gets a whole other chip; deleting one sharer leaves the other untouched and the
waiting pod takes the freed share. (tests/e2e/real_node_v137/test_sharing_on_real_node_v137.py
is the same with consumable capacity.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_dra.domain.quantity import Quantity
from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.sharing_pods import (
    CHIP_ZERO,
    SHARE_CLASS,
    claimed_device,
    container_env,
    pod,
    remove,
    template,
    unschedulable,
)
from tests.support.controlplane import wait_for
from tests.support.fake_npu_smi import FakeNpuSmi

SHARES = {f"npu-0-share-{i}" for i in range(2)}
SHARERS = ("fixed-a", "fixed-b")
LATE, WHOLE = "fixed-late", "fixed-whole"
MIB = 2**20


@pytest.mark.timeout(600)
def test_two_pods_take_the_two_fixed_shares_of_a_chip(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    cluster = real_cluster
    smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "smi")
    argv = [a for a in cluster.dra_argv() if not a.startswith("--npu-smi=")]
    argv += [f"--npu-smi={smi.path}", "--shared-chips=npu-0", "--chip-shares=2"]
    plugin = cluster.start_plugin("dra-plugin-fixed-shares", argv)
    try:
        cluster.wait_registered(plugin)
        published = wait_for(
            lambda: set(cluster.published()) >= SHARES and cluster.published(),
            timeout=60,
            what="npu-0's two shares published",
        )
        assert "npu-0" not in published
        share = Quantity.parse(published["npu-0-share-0"]["capacity"]["memCapacity"]["value"])
        cluster.apply(
            template("fixed-share", memory=None, selector=CHIP_ZERO, device_class=SHARE_CLASS)
        )
        cluster.apply(template("fixed-whole", memory=None, selector="true"))
        for name in SHARERS:
            cluster.apply(pod(name, "fixed-share"))
        for name in SHARERS:
            cluster.wait_running(name)
        assert {claimed_device(cluster, n) for n in SHARERS} == SHARES
        assert len(smi.device_share_on()) == 1, smi.device_share_on()
        for name in SHARERS:
            env = container_env(cluster, name)
            assert env["NPU_DRA_DEVICE_0_SHARING"] == "Shared"
            assert env["NPU_DRA_DEVICE_0_MEMORY_MIB"] == str(int(share.value) // MIB)
            assert "davinci0" in cluster.in_container(name, "ls", "/dev")

        cluster.apply(pod(LATE, "fixed-share"))
        cluster.apply(pod(WHOLE, "fixed-whole"))
        message = wait_for(
            lambda: unschedulable(cluster, LATE), timeout=60, what=f"{LATE} unschedulable"
        )
        assert "cannot allocate all claims" in message, message
        cluster.wait_running(WHOLE)
        assert claimed_device(cluster, WHOLE) not in SHARES

        kept = cluster.claim_uids(SHARERS[1])
        before = cluster.read_pod(SHARERS[1])["status"]["containerStatuses"][0]
        freed = claimed_device(cluster, SHARERS[0])
        cluster.delete_pod(SHARERS[0])
        assert set(kept) <= cluster.checkpointed_uids() & cluster.cdi_spec_uids()
        after = cluster.read_pod(SHARERS[1])["status"]["containerStatuses"][0]
        assert (after["containerID"], after["restartCount"]) == (before["containerID"], 0)
        cluster.wait_running(LATE)
        assert claimed_device(cluster, LATE) == freed
    except (AssertionError, TimeoutError) as error:
        raise AssertionError(
            f"{error}\n--- plugin:\n{plugin.tail(60)}\n--- kubelet:\n{cluster.node.kubelet_log(40)}"
        ) from None
    finally:
        remove(cluster, (*SHARERS, LATE, WHOLE), ("fixed-share", "fixed-whole"))
        plugin.stop()
