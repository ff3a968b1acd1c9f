"""One DeviceClass per kind on a real v1.37.2 node (deploy/manifests/40-deviceclass.yaml applied
as shipped), with every chip shared (`--shared-chips=all`; consumable capacity, on by default
there): a share claim through `share.npu.huawei.com` takes part of a chip, a two-NPU claim
through `npu.huawei.com` runs beside it on two whole chips, never the shared-out one nor one chip
twice; and a claim written for Huawei's own DRA driver (`physicId`, `deviceType`) runs and sees
the chip it named. The real kube-scheduler decides; the pods' containers show what they got."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_node.cluster import DRIVER, RealCluster
from tests.e2e.real_node.sharing_pods import SHARE_CLASS, container_env, pod, remove, template
from tests.support.controlplane import wait_for
from tests.support.fake_npu_smi import FakeNpuSmi

A = f'device.attributes["{DRIVER}"]'
HUAWEI_FORM = f'{A}.physicId in [5] && {A}.deviceType == "Ascend910B"'


@pytest.fixture
def all_shared(real_cluster_v137: RealCluster, tmp_path: Path) -> Any:
    cluster = real_cluster_v137
    smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "smi")
    argv = [a for a in cluster.dra_argv() if not a.startswith("--npu-smi=")]
    argv += [f"--npu-smi={smi.path}", "--shared-chips=all"]
    plugin = cluster.start_plugin("dra-plugin-classes", argv)
    cluster.wait_registered(plugin)
    wait_for(  # not an earlier test's slices of whole chips: every chip shared, as published here
        lambda: (
            len(shared := cluster.published()) == 8
            and all(d.get("allowMultipleAllocations") for d in shared.values())
        ),
        timeout=60,
        what="8 shared chips published",
    )
    yield cluster, plugin
    plugin.stop()
    # The next test's plugin republishes; until it has, the scheduler must not allocate these
    # shared chips to a claim that plugin will not prepare as a share.
    cluster.plane.kubectl(
        "delete", "resourceslices", "--field-selector", f"spec.nodeName={cluster.node.name}",
        check=False,
    )  # fmt: skip


def devices_of(cluster: RealCluster, name: str) -> list[str]:
    [uid] = cluster.claim_uids(name)
    return sorted(cluster.allocated_devices(uid))


@pytest.mark.timeout(600)
def test_whole_chips_share_and_huaweis_form_each_get_their_kind(all_shared: Any) -> None:
    cluster, plugin = all_shared
    pods = ("a-share", "two-whole", "huawei-form")
    templates = ("a-share", "two-whole", "huawei-form")
    try:
        cluster.apply(template("a-share", memory="8Gi", selector="true", device_class=SHARE_CLASS))
        cluster.apply(template("two-whole", memory=None, selector="true", count=2))
        cluster.apply(template("huawei-form", memory=None, selector=HUAWEI_FORM))
        for name in pods:  # in order: the share is placed before the whole chips
            cluster.apply(pod(name, name))
            cluster.wait_running(name)
        [shared] = devices_of(cluster, "a-share")
        whole = devices_of(cluster, "two-whole")
        assert len(set(whole)) == 2, whole
        assert shared not in whole, (shared, whole)
        assert devices_of(cluster, "huawei-form") == ["npu-5"]

        share_env = container_env(cluster, "a-share")
        assert share_env[f"NPU_DRA_DEVICE_{shared.removeprefix('npu-')}_MEMORY_MIB"] == "8192"
        ids = sorted(int(d.removeprefix("npu-")) for d in whole)
        env = container_env(cluster, "two-whole")
        assert env["ASCEND_VISIBLE_DEVICES"] == ",".join(map(str, ids))
        seen = cluster.in_container("two-whole", "ls", "/dev").split()
        assert {f"davinci{i}" for i in ids} <= set(seen)
        assert container_env(cluster, "huawei-form")["ASCEND_VISIBLE_DEVICES"] == "5"
        assert "davinci5" in cluster.in_container("huawei-form", "ls", "/dev").split()
    except (AssertionError, TimeoutError) as error:
        raise AssertionError(
            f"{error}\n--- plugin:\n{plugin.tail(60)}\n--- kubelet:\n{cluster.node.kubelet_log(40)}"
        ) from None
    finally:
        remove(cluster, pods, templates)
