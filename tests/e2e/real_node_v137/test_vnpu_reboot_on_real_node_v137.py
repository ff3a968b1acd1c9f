"""A reboot, faked on the real v1.37.2 node (DRAPartitionableDevices on by default there), with a
pod running on a vNPU: the plugin dies with the node (SIGKILL), the kernel's boot id is new
(`--boot-id-file`), the CDI directory is empty, the chips' vNPU table is empty and their device
nodes are gone (the driver's state lives in the running kernel), and the pod's container dies
and is started again by the kubelet, which does not prepare its claim again.

The plugin, started again, sees the new boot and, before it serves, makes the claim's vNPU again
with the id and template its checkpoint recorded, and writes its spec back: the kubelet registers
a plugin whose vNPU is already there, and the container runs again with the same /dev/davinci<id>.

The plugin runs on the host with `--vnpu=templates` over the Python fake npu-smi, which makes
and removes each vNPU's character device `<dev root>/vdavinci<id>` as the driver does
(`FakeNpuSmi.make_vnpu_nodes`): containerd reads a CDI device node's numbers from the host's
node, so a container is given a vNPU only once that node exists.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.npu_smi.replay_vnpu import STATE_FILE, state_of
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.vnpu.instance import VnpuRecord
from tests.e2e.real_node.cluster import DRIVER, Plugin, RealCluster
from tests.e2e.real_node.test_reboot_on_real_node import kill_container, restarted_running
from tests.e2e.real_node.test_seed_on_real_node import char_devices
from tests.e2e.seed_yaml import SEED_POD_SPEC
from tests.support.controlplane import wait_for
from tests.support.fake_npu_smi import VNPU_MAJOR, FakeNpuSmi, load_scenario

POD = "vnpu-reboot-pod"
TEMPLATE = "vir05_1c_8g"
ATTRIBUTES = f'device.attributes["{DRIVER}"]'
CLAIM_TEMPLATE_AND_POD = f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-vnpu
  namespace: ascend-dra
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: vnpu.{DRIVER}
          selectors:
          - cel:
              expression: >-
                "vnpuTemplate" in {ATTRIBUTES} && {ATTRIBUTES}.vnpuTemplate == "{TEMPLATE}"
---
apiVersion: v1
kind: Pod
metadata:
  name: {POD}
  namespace: ascend-dra
spec:
  terminationGracePeriodSeconds: 1
  resourceClaims:
  - name: npu
    resourceClaimTemplateName: one-vnpu
{SEED_POD_SPEC}"""
REGISTERED = "kubelet registered plugin"


def vnpu_of(cluster: RealCluster, pod: str) -> tuple[ClaimUID, VnpuRecord]:
    """The pod's claim and the vNPU its checkpoint records."""
    [uid] = cluster.claim_uids(pod)
    [device] = cluster.checkpoint().claims[ClaimUID(uid)].devices
    assert device.vnpu is not None, f"{device.device} was prepared as no vNPU"
    return ClaimUID(uid), device.vnpu


def listed(smi: FakeNpuSmi) -> list[tuple[int, str]]:
    """The chips' vNPU table as npu-smi holds it: (id, template) of each."""
    return sorted(
        (int(v["id"]), str(v["template"]))
        for vnpus in state_of(smi.directory).values()
        for v in vnpus
    )


def davinci_nodes(cluster: RealCluster, pod: str) -> dict[str, tuple[int, int]]:
    """The container's /dev/davinci<N> character devices: name -> (major, minor)."""
    found = char_devices(cluster.in_container(pod, "ls", "-ln", "/dev"))
    return {name: numbers for name, numbers in found.items() if re.fullmatch(r"davinci\d+", name)}


def messages(plugin: Plugin) -> list[str]:
    """The plugin's log lines (`--log-format=json`), each its message."""
    lines = plugin.log.read_text(errors="replace").splitlines() if plugin.log.exists() else []
    found = []
    for line in lines:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            found.append(str(entry.get("msg", "")) if isinstance(entry, dict) else line)
    return found


def first(lines: list[str], text: str) -> int:
    """Where `text` is first said; an AssertionError naming it if it never is."""
    found = [i for i, line in enumerate(lines) if text in line]
    assert found, f"the plugin never said {text!r}"
    return found[0]


def wait_registered(plugin: Plugin) -> None:
    """This plugin process was registered by the kubelet (its own log says so: the kubelet's
    may still hold an earlier plugin's registration)."""
    wait_for(
        lambda: any(REGISTERED in m for m in messages(plugin)) or not plugin.running(),
        timeout=60,
        what=f"the kubelet to register {plugin.name}",
    )
    assert plugin.running(), f"{plugin.name} exited:\n{plugin.tail()}"


def reboot_the_driver(smi: FakeNpuSmi, dev_root: Path) -> None:
    """What a reboot does to the chips: no vNPU left, and their device nodes gone with them."""
    (smi.directory / STATE_FILE).write_text("{}\n")
    for node in dev_root.glob("vdavinci*"):
        node.unlink()


def remove_vnpu_nodes(dev_root: Path) -> None:
    for node in dev_root.glob("vdavinci*"):
        node.unlink(missing_ok=True)


@pytest.mark.timeout(600)
def test_a_reboot_gives_a_pod_its_vnpu_back_before_the_plugin_serves(
    real_cluster_v137: RealCluster, tmp_path: Path
) -> None:
    cluster = real_cluster_v137
    dev_root = cluster.host.dev_dir
    smi = FakeNpuSmi(tmp_path / "smi", {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
    smi.make_vnpu_nodes(dev_root)
    boot = tmp_path / "boot_id"
    boot.write_text(f"{uuid.uuid4()}\n")
    argv = [a for a in cluster.dra_argv() if not a.startswith("--npu-smi=")]
    argv += [f"--npu-smi={smi.path}", "--vnpu=templates", f"--boot-id-file={boot}"]
    plugin = cluster.start_plugin("vnpu-before-reboot", argv)
    with contextlib.ExitStack() as undo:  # last first: the pod goes while a plugin serves
        undo.callback(remove_vnpu_nodes, dev_root)
        undo.callback(cluster.stop_plugins)  # the one running then (the others are stopped)
        undo.callback(
            cluster.plane.kubectl,
            *("delete", "resourceclaimtemplate", "one-vnpu", "-n", "ascend-dra"),
            *("--ignore-not-found",),
            check=False,
        )
        undo.callback(cluster.delete_pod, POD)
        try:
            wait_registered(plugin)
            wait_for(
                lambda: any(
                    "vnpuTemplate" in d.get("attributes", {}) for d in cluster.published().values()
                ),
                timeout=60,
                what="vNPU devices published",
            )
            cluster.apply(CLAIM_TEMPLATE_AND_POD)
            cluster.wait_running(POD)
            uid, vnpu = vnpu_of(cluster, POD)
            assert vnpu.template == TEMPLATE
            assert listed(smi) == [(vnpu.vnpu_id, TEMPLATE)]
            node = f"davinci{vnpu.vnpu_id}"
            assert davinci_nodes(cluster, POD) == {node: (VNPU_MAJOR, vnpu.vnpu_id)}

            plugin.stop(kill=True)  # the node goes down: nothing of the plugin's runs on
            boot.write_text(f"{uuid.uuid4()}\n")
            for spec in cluster.node.cdi_root.glob(f"k8s.{DRIVER}-*.json"):
                spec.unlink()
            reboot_the_driver(smi, dev_root)
            kill_container(cluster, POD)
            assert listed(smi) == []
            plugin = cluster.start_plugin("vnpu-after-reboot", argv)
            wait_registered(plugin)

            assert listed(smi) == [(vnpu.vnpu_id, TEMPLATE)]  # the same id and template
            assert (dev_root / f"vdavinci{vnpu.vnpu_id}").is_char_device()
            said = messages(plugin)
            rebooted = first(said, "the node rebooted")
            recreated = first(said, f"recreated vNPU {vnpu.vnpu_id} of claim {uid}")
            assert rebooted < recreated < first(said, "serving on") < first(said, REGISTERED)
            assert vnpu_of(cluster, POD) == (uid, vnpu)
            assert str(uid) in cluster.cdi_spec_uids()

            wait_for(
                lambda: restarted_running(cluster, POD),
                timeout=180,
                what=f"{POD}'s container started again",
            )
            assert davinci_nodes(cluster, POD) == {node: (VNPU_MAJOR, vnpu.vnpu_id)}

            cluster.delete_pod(POD)  # unprepared after the reboot as before: the vNPU destroyed
            wait_for(lambda: listed(smi) == [], timeout=60, what=f"vNPU {vnpu.vnpu_id} destroyed")
            assert not (dev_root / f"vdavinci{vnpu.vnpu_id}").exists()
            assert plugin.running(), plugin.tail()
        except (AssertionError, TimeoutError) as error:
            raise AssertionError(
                f"{error!r}\n--- plugin:\n{plugin.tail(60)}\n"
                f"--- kubelet:\n{cluster.node.kubelet_log(60)}"
            ) from None
