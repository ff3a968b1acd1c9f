"""Claim status and device metadata on a real node (kubelet v1.34.3, containerd, runc), with the
fake Ascend host's hccn_tool telling each NPU's address: deploy/examples/rank-table-claim.yaml,
applied verbatim, prints the HCCL rank-table fields of its two NPUs from the metadata file its
container was given (KEP-5304); the claim's status.devices (KEP-4817) says the same; when the
pod is gone the kubelet unprepares the claim and both go."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_node.cluster import Plugin, RealCluster
from tests.support.ascend_host import device_ip
from tests.support.controlplane import wait_for

EXAMPLE = Path(__file__).resolve().parents[3] / "deploy" / "examples" / "rank-table-claim.yaml"
CLAIM, POD = "npu-rank-table-claim", "npu-rank-table-pod"
METADATA = f"/var/run/dra-device-attributes/{CLAIM}/npu/npu.huawei.com-metadata.json"
ROW = re.compile(r"server_id=(\S*) device_id=(\d+) device_ip=(\S*) super_pod_id=(\S*)")


def status_devices(cluster: RealCluster) -> list[dict[str, Any]]:
    claim = json.loads(
        cluster.plane.kubectl(
            "get", "resourceclaim", CLAIM, "-n", "ascend-dra", "-o", "json"
        ).stdout
    )
    return list(claim.get("status", {}).get("devices") or [])


@pytest.mark.timeout(600)
def test_a_pod_prints_its_rank_table_fields_from_its_metadata_and_its_claim_says_the_same(
    real_cluster: RealCluster,
) -> None:
    rank_table_round(real_cluster)


def rank_table_round(cluster: RealCluster) -> None:
    """The example's pod prints its rows, its claim's status agrees, both go with the pod (the
    v1.37.2 lane runs it too: real_node_v137/test_claim_status_on_real_node_v137.py)."""
    plugin: Plugin = cluster.start_plugin("dra-plugin", cluster.dra_argv())
    try:
        cluster.wait_registered(plugin)
        wait_for(lambda: len(cluster.published()) == 8, timeout=60, what="8 NPUs published")
        cluster.apply(EXAMPLE.read_text())
        pod = cluster.wait_running(POD)
        [uid] = cluster.claim_uids(POD)
        devices = cluster.allocated_devices(uid)
        physical = sorted(int(d.removeprefix("npu-")) for d in devices)

        rows = wait_for(
            lambda: ROW.findall(cluster.node.pod_log("ascend-dra", POD)) or None,
            timeout=30,
            what="the pod's rank-table rows",
        )
        host_ip = pod["status"]["hostIP"]
        assert sorted(rows, key=lambda r: int(r[1])) == [
            (host_ip, str(n), device_ip(n).partition("/")[0], "") for n in physical
        ]
        document = json.loads(cluster.in_container(POD, "cat", METADATA))
        assert document["metadata"]["uid"] == uid

        entries = wait_for(
            lambda: found if len(found := status_devices(cluster)) == 2 else None,
            timeout=30,
            what="the claim's status.devices",
        )
        assert sorted(e["device"] for e in entries) == devices
        for entry in entries:
            n = entry["data"]["physicalId"]
            assert entry["networkData"] == {"ips": [device_ip(n)]}
            assert entry["conditions"][0]["type"] == "Ready"

        cluster.delete_pod(POD)
        wait_for(
            lambda: not status_devices(cluster) and uid not in cluster.checkpointed_uids(),
            timeout=60,
            what="the claim unprepared and its status cleared",
        )
        assert not (cluster.plugins_dir / "npu.huawei.com" / "dra-device-metadata" / uid).exists()
        assert plugin.running(), plugin.tail()
    finally:
        plugin.stop()
        cluster.plane.kubectl("delete", "-f", str(EXAMPLE), "--ignore-not-found", check=False)
