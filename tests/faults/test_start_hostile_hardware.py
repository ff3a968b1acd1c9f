"""The kubelet plugin started with `--vnpu=templates` on hardware that answers badly: npu-smi
failing, hanging, an unparsable vNPU answer, a negative number in template-info, a vNPU the
plugin did not create that cannot be destroyed.

However the hardware answers, the start depends on neither npu-smi nor the API server: the
plugin serves unprepare and idempotent prepares of its checkpointed claims at once, from the
checkpoint, within a bound far below one probe timeout per claim. A vNPU no checkpoint record
names is reported (log and a Warning Event on the Node), never destroyed.

The plugin runs in-process, as tests/integration/kubelet_plugin runs it, over the fake npu-smi
(tests/support/fake_npu_smi.py, with the vNPU table of 910B4 hosts) and the in-memory cluster: a
first, healthy start prepares the claims; a second start meets the hostile hardware.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.npu_smi.replay_vnpu import state_of
from npu_dra.app.commands.kubelet_plugin_runtime import KubeletPlugin, build_container
from npu_dra.app.container import Container
from npu_dra.app.options import Hardware, Settings, defaults
from tests.faults.harness import PER_POD, SOCKET_MODES
from tests.support.controlplane import wait_for
from tests.support.fake_npu_smi import INFO, FakeNpuSmi, load_scenario, make_dev_root, make_sysfs
from tests.support.kubelet import Kubelet, WireClaim, allocated_claim

NODE = "hostile-1"
DRIVER = "npu.huawei.com"
PROBE_TIMEOUT_S = 3.0  # --probe-timeout: each npu-smi command (and each probe) waits no longer
WHOLE_CHIPS = [f"npu-{i}" for i in range(6)]
OUR_VNPU = "npu-6-vir05-1c-8g-0"  # a vNPU device of chip npu-6 (card 6): vNPU id 196
FOREIGN = {"card": 7, "chip": "npu-7", "id": 215, "template": "vir05_1c_8g"}  # made by hand
CLAIMS = len(WHOLE_CHIPS) + 1
# Far below one probe timeout per checkpointed claim (7 x 3 s = 21 s, the old start's cost
# before it exited), generous for a loaded 2-core machine: two probe timeouts.
SERVED_WITHIN_S = 2 * PROBE_TIMEOUT_S
REPORT_WAIT_S = 60.0  # how long the background reconcile may take to say what it found

TEMPLATES_HEADER = (
    "+" + "-" * 90 + "+\n"
    "|NPU instance template info is:" + " " * 60 + "|\n"
    "|Name                AICORE    Memory    AICPU     VPC            VENC           JPEGD     |\n"
    "|                              GB                  PNGD           VDEC           JPEGE     |\n"
    "|" + "=" * 90 + "|\n"
)
NEGATIVE_TEMPLATE = TEMPLATES_HEADER + (
    "|vir05_1c_8g         5         -8        1         2              0              6         |\n"
    "|                                                  0              0              1         |\n"
    "+" + "-" * 90 + "+\n"
)
UNPARSABLE_INFO_VNPU = (
    "+" + "-" * 79 + "+\n"
    "| NPU resource static info as follow:" + " " * 43 + "|\n"
    "| AICORE    Memory    AICPU    VPC    VENC    VDEC    JPEGD    JPEGE    PNGD    |\n"
    "|" + "=" * 79 + "|\n"
    "| 20/2O     32/32     6/6      9/9    0/0     2/2     24/24    4/4      NA/NA   |\n"
    "+" + "-" * 79 + "+\n"
)


def info_fails(smi: FakeNpuSmi) -> None:
    smi.set_answer(INFO, exit=1, stdout="", stderr="dcmi module initialize failed. ret is -8005\n")


def hangs(smi: FakeNpuSmi) -> None:
    smi.set_delay(3600)  # every command, the vNPU ones included


def vnpu_unparsable(smi: FakeNpuSmi) -> None:
    smi.set_fault(["info", "-t", "info-vnpu"], stdout=UNPARSABLE_INFO_VNPU)


def template_negative(smi: FakeNpuSmi) -> None:
    smi.set_fault(["info", "-t", "template-info"], stdout=NEGATIVE_TEMPLATE)


def destroy_fails(smi: FakeNpuSmi) -> None:
    smi.set_fault(["set", "-t", "destroy-vnpu"], exit=1, stdout="destroy vnpu failed.\n")


def healthy(smi: FakeNpuSmi) -> None:
    """Nothing wrong with the hardware: only the foreign vNPU is there."""


@dataclass(frozen=True)
class Case:
    hostile: Callable[[FakeNpuSmi], None]
    lists_vnpus: bool  # whether the chips' vNPUs can be listed, so the foreign one is seen


CASES = {
    "npu-smi info fails": Case(info_fails, lists_vnpus=False),
    "npu-smi hangs": Case(hangs, lists_vnpus=False),
    "unparsable info-vnpu": Case(vnpu_unparsable, lists_vnpus=False),
    "negative number in template-info": Case(template_negative, lists_vnpus=True),
    "foreign vNPU cannot be destroyed": Case(destroy_fails, lists_vnpus=True),
    "healthy, with a foreign vNPU": Case(healthy, lists_vnpus=True),
}


@dataclass
class Host:
    root: Path
    smi: FakeNpuSmi
    settings: Settings
    cluster: MemoryCluster

    def start(self) -> tuple[Container, KubeletPlugin]:
        container = build_container(self.settings)
        container.cluster.override(self.cluster)
        plugin = KubeletPlugin(container)
        plugin.start()
        return container, plugin

    def claim(self, name: str, device: str) -> WireClaim:
        body = allocated_claim(name, [device], pool=NODE, driver=DRIVER)
        meta = self.cluster.create(body)["metadata"]
        return WireClaim(meta["namespace"], meta["name"], meta["uid"])

    def vnpus(self, chip: str) -> dict[int, str]:
        card = chip.removeprefix("npu-")
        return {v["id"]: v["template"] for v in state_of(self.smi.directory).get(f"{card}/0", [])}

    def destroy_calls(self, vnpu_id: int) -> list[str]:
        return [c for c in self.smi.calls() if "destroy-vnpu" in c and c.endswith(f" {vnpu_id}")]

    def node_events(self, reason: str) -> list[dict[str, Any]]:
        return [
            e
            for e in self.cluster.list("Event")
            if e["reason"] == reason and e["regarding"]["kind"] == "Node"
        ]


@pytest.fixture(params=SOCKET_MODES)
def host(request: pytest.FixtureRequest) -> Iterator[Host]:
    """vNPUs × socket names: per-pod (the chart's default, state steps under the lock two
    instances share) and one-instance."""
    per_pod = request.param == PER_POD
    root = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))  # short: sockets live under it
    try:
        smi = FakeNpuSmi(root / "smi", {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
        settings = defaults(
            node_name=NODE,
            driver_name=DRIVER,
            device_profile="npu",
            registrar_dir=root / "registry",
            plugins_dir=root / "plugins",
            cdi_root=root / "cdi",
            hardware=Hardware("npu_smi"),
            npu_smi_path=smi.path,
            dev_root=make_dev_root(root / "dev", range(8)),
            sysfs_root=make_sysfs(root / "sys"),
            probe_timeout=PROBE_TIMEOUT_S,
            cluster="memory",
            vnpu="templates",
            api_lock_dir=root / "api-lock",  # this node's host directory, not the machine's
            seamless_upgrade="on" if per_pod else "off",
            pod_uid=str(uuid.uuid4()) if per_pod else "",
        )
        yield Host(root, smi, settings, MemoryCluster())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def prepared_on_healthy_hardware(host: Host) -> tuple[list[WireClaim], dict[str, list[str]]]:
    """A first start: every claim prepared (one of them a vNPU), then a vNPU made by hand on
    npu-7 (an earlier install's, or an operator's), and the plugin stopped."""
    container, plugin = host.start()
    try:
        assert container.node.maintainer().wait_published(30), "the pool was never published"
        published = {d.name for s in host.cluster.list_slices(driver=DRIVER) for d in s.devices}
        assert OUR_VNPU in published, sorted(published)
        claims = [host.claim(f"whole-{i}", chip) for i, chip in enumerate(WHOLE_CHIPS)]
        claims.append(host.claim("part", OUR_VNPU))
        with Kubelet(host.settings.registrar_dir).register() as dra:
            answer = dra.prepare(claims, timeout=60)
        devices = {uid: [d.device_name for d in a.devices] for uid, a in answer.claims.items()}
        assert {uid: a.error for uid, a in answer.claims.items()} == {c.uid: "" for c in claims}
    finally:
        plugin.stop()
    chip = ("-i", str(FOREIGN["card"]), "-c", "0")
    made = ("-f", str(FOREIGN["template"]), "-v", str(FOREIGN["id"]))
    subprocess.run(
        [host.smi.path, "set", "-t", "create-vnpu", *chip, *made], check=True, capture_output=True
    )
    assert host.vnpus("npu-6") == {196: "vir05_1c_8g"}
    assert host.vnpus("npu-7") == {FOREIGN["id"]: FOREIGN["template"]}
    return claims, devices


def foreign_reports(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if f"vNPU {FOREIGN['id']}" in r.getMessage() and str(FOREIGN["chip"]) in r.getMessage()
    ]


def waits_for_hardware(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if "vNPU reconcile" in r.getMessage() and "retrying" in r.getMessage()
    ]


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_the_start_serves_checkpointed_claims_at_once_and_never_destroys_a_foreign_vnpu(
    host: Host, case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    claims, devices = prepared_on_healthy_hardware(host)
    case.hostile(host.smi)

    began = time.monotonic()
    _, plugin = host.start()  # the old start: exit 1 ("cannot start: ...") in every hostile case
    try:
        with Kubelet(host.settings.registrar_dir).register() as dra:
            again = dra.prepare(claims, timeout=60)
            gone = dra.unprepare(claims[:1], timeout=60)
        served_s = time.monotonic() - began

        if case.lists_vnpus:
            found = wait_for(
                lambda: foreign_reports(caplog) and host.node_events("ForeignVnpu"),
                timeout=REPORT_WAIT_S,
                what="the foreign vNPU's report",
            )
            assert str(FOREIGN["id"]) in found[0]["note"]
            assert found[0]["type"] == "Warning"
        else:
            wait_for(
                lambda: waits_for_hardware(caplog),
                timeout=REPORT_WAIT_S,
                what="the report that the vNPU reconcile waits for the hardware",
            )
        still_there = host.vnpus("npu-7")
    finally:
        plugin.stop()

    assert {uid: a.error for uid, a in again.claims.items()} == {c.uid: "" for c in claims}
    assert {uid: [d.device_name for d in a.devices] for uid, a in again.claims.items()} == devices
    assert {uid: a.error for uid, a in gone.claims.items()} == {claims[0].uid: ""}
    assert served_s < SERVED_WITHIN_S, f"served after {served_s:.1f}s"
    assert still_there == {FOREIGN["id"]: FOREIGN["template"]}
    assert host.destroy_calls(int(FOREIGN["id"])) == []
    assert host.vnpus("npu-6") == {196: "vir05_1c_8g"}  # ours, prepared: untouched
