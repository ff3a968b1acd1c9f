"""A reboot, faked on the real node: the plugin dies with the node (SIGKILL), the kernel's boot id
is new (`--boot-id-file`), the CDI directory is empty (a tmpfs after a boot), and the pods'
containers die and are started again by the kubelet, which does not prepare their claims again.

The plugin, started again, sees the new boot and, before it serves, writes the specs back for the
claims still prepared, each device first checked against the identity the checkpoint recorded
(its PCI address): the pod whose chip is the same runs again with the same /dev/davinciN; the
pod whose chip's name now answers with another PCI address (another chip) is not re-pointed: its
spec stays removed, so its container cannot start, its claim gets a PreparedDeviceGone Event, and
`npu_dra_claims_device_gone` counts it. Deleting that pod still unprepares its claim.
"""

from __future__ import annotations

import json
import socket
import urllib.request
import uuid
from pathlib import Path

import pytest

from npu_dra.domain.ids import ClaimUID
from tests.e2e.real_node.cluster import Plugin, RealCluster
from tests.e2e.real_node.test_restarts_on_real_node import TEMPLATE, davinci_in, pod_with_one_npu
from tests.support.controlplane import wait_for

GONE_REASON = "PreparedDeviceGone"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scrape(port: int, name: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith(f"{name} "):
                return float(line.split()[1])
    return None


def claim_events(cluster: RealCluster, claim: str) -> list[str]:
    found = cluster.plane.kubectl(
        "get", "events", "-n", "ascend-dra", "--field-selector",
        f"involvedObject.name={claim},involvedObject.kind=ResourceClaim", "-o", "json",
    ).stdout  # fmt: skip
    return [
        f"{e['reason']}: {e.get('message') or e.get('note', '')}"
        for e in json.loads(found)["items"]
    ]


def claim_name(cluster: RealCluster, pod: str) -> str:
    statuses = cluster.read_pod(pod)["status"]["resourceClaimStatuses"]
    return str(statuses[0]["resourceClaimName"])


def restarted_running(cluster: RealCluster, pod: str) -> bool:
    statuses = cluster.read_pod(pod)["status"].get("containerStatuses") or []
    return bool(statuses) and all(s["restartCount"] >= 1 and s.get("ready") for s in statuses)


def waiting_reason(cluster: RealCluster, pod: str) -> str:
    statuses = cluster.read_pod(pod)["status"].get("containerStatuses") or []
    return " ".join(
        f"{s['state']['waiting'].get('reason')}: {s['state']['waiting'].get('message', '')}"
        for s in statuses
        if "waiting" in s.get("state", {})
    )


def kill_container(cluster: RealCluster, pod: str) -> None:
    container = cluster.node.container_id("ascend-dra", pod)
    cluster.node.ctr("tasks", "kill", "--signal", "SIGKILL", container)


def moved_npu_smi(cluster: RealCluster, bus_id: str, into: Path) -> Path:
    """The host's npu-smi after the boot: the chip at `bus_id` answers at another address."""
    script = cluster.host.npu_smi.read_text()
    assert script.count(bus_id) >= 1, f"{bus_id} is not in the recorded npu-smi"
    into.write_text(script.replace(bus_id, "0000:99:00.0"))
    into.chmod(0o755)
    return into


@pytest.mark.timeout(900)
def test_a_reboot_gives_pods_their_npus_back_and_never_another_chip(
    real_cluster: RealCluster, tmp_path: Path
) -> None:
    cluster = real_cluster
    boot, port = tmp_path / "boot_id", free_port()
    boot.write_text(f"{uuid.uuid4()}\n")
    argv = [*cluster.dra_argv(), f"--boot-id-file={boot}", f"--metrics-port={port}"]
    cluster.apply(TEMPLATE)
    plugin: Plugin = cluster.start_plugin("before-reboot", argv)
    pods = ("same-chip", "moved-chip")
    try:
        cluster.wait_registered(plugin)
        cluster.apply("---\n".join(pod_with_one_npu(p) for p in pods))
        for pod in pods:
            cluster.wait_running(pod)
        npus = {pod: davinci_in(cluster, pod) for pod in pods}
        claims = {pod: cluster.claim_uids(pod)[0] for pod in pods}
        [moved] = cluster.checkpoint().claims[ClaimUID(claims["moved-chip"])].devices
        assert moved.identity is not None
        assert moved.identity.startswith("pci:")

        plugin.stop(kill=True)  # the node goes down: nothing of the plugin's runs on
        boot.write_text(f"{uuid.uuid4()}\n")
        for spec in cluster.node.cdi_root.glob("*.json"):
            spec.unlink()
        for pod in pods:
            kill_container(cluster, pod)
        rebooted = moved_npu_smi(cluster, moved.identity.removeprefix("pci:"), tmp_path / "smi")
        plugin = cluster.start_plugin("after-reboot", [*argv, f"--npu-smi={rebooted}"])
        cluster.wait_registered(plugin)

        wait_for(lambda: restarted_running(cluster, "same-chip"), timeout=180,
                 what="same-chip's container started again")  # fmt: skip
        assert davinci_in(cluster, "same-chip") == npus["same-chip"]
        assert claims["same-chip"] in cluster.cdi_spec_uids()

        name = claim_name(cluster, "moved-chip")
        wait_for(lambda: any(GONE_REASON in e for e in claim_events(cluster, name)), timeout=60,
                 what=f"a {GONE_REASON} Event on {name}")  # fmt: skip
        assert claims["moved-chip"] not in cluster.cdi_spec_uids()
        assert scrape(port, "npu_dra_claims_device_gone") == 1.0
        wait_for(lambda: "CDI" in waiting_reason(cluster, "moved-chip") or
                 "cdi" in waiting_reason(cluster, "moved-chip"), timeout=120,
                 what="moved-chip's container refused for its missing CDI device")  # fmt: skip
        assert not restarted_running(cluster, "moved-chip")

        cluster.delete_pod("moved-chip")
        wait_for(lambda: claims["moved-chip"] not in cluster.checkpointed_uids(), timeout=60,
                 what="the moved chip's claim unprepared")  # fmt: skip
        assert plugin.running(), plugin.tail()
    finally:
        for pod in pods:
            cluster.delete_pod(pod)
        plugin.stop()
