"""Odd and hostile vNPU answers from npu-smi (issue 24, finding 6): a template name that makes no
device name, a 10 kB name, names differing only by case or `_`/`-`, chip totals of 10^5 and
10^12, a 20 MiB line and 20 M short lines, from small shell scripts written here (every command
but template-info and info-vnpu answered by the fake 910B4 host).

A bad template is left out and reported once (a second probe and publish logs nothing new); the
rest of the pool (every whole chip, the other templates' vNPUs) is published, and a real v1.34.3
API server with the vNPU gates on accepts it, device names unique. A chip holds at most
IDS_PER_CHIP vNPUs of a template. What npu-smi prints is read only up to a bound: the error
says so, briefly, and memory stays bounded.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.domain.vnpu.instance import IDS_PER_CHIP
from tests.support.controlplane import ControlPlane
from tests.support.fake_npu_smi import FIXTURES, FakeNpuSmi, make_dev_root, make_sysfs

TEMPLATE_INFO = recorded(FIXTURES / "npu-smi-info-t-template-info_910B4-32G.txt")
INFO_VNPU = recorded(FIXTURES / "npu-smi-info-t-info-vnpu_910B4-32G_empty.txt")
GOOD = ("vir10_3c_16g", "vir10_4c_16g_m", "vir10_3c_16g_nm", "vir05_1c_8g")
CHIPS = [f"npu-{i}" for i in range(8)]
PER_CHIP = 2 + 1 + 2 + 4  # the recorded 910B4 totals hold 2, 1, 2 and 4 of GOOD
SHORT = 500  # a log line or error quoting hostile text stays this short (~200 chars quoted)
PEAK_RSS_MIB = 200  # generous: the interpreter with npu_dra imported is about 60 MiB


@pytest.fixture
def gated_plane(control_plane_gated: ControlPlane) -> ControlPlane:
    """DRAPartitionableDevices on, so the server keeps counters and vNPU devices are published."""
    return control_plane_gated


def with_templates(*names: str) -> str:
    """The recorded 910B4 template-info, plus one template per name with vir05_1c_8g's numbers."""
    lines = TEMPLATE_INFO.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("|vir05_1c_8g"))
    block = lines[at : at + 3]  # its two lines and the border under them
    extra = [line.replace("vir05_1c_8g", name, 1) for name in names for line in block]
    return "\n".join([*lines, *extra, ""])


def with_totals(total: int) -> str:
    """The recorded empty 910B4 info-vnpu, every resource's Free/Total `total`."""
    row = next(line for line in INFO_VNPU.splitlines() if "20/20" in line)
    cells = "  ".join([f"{total}/{total}"] * 8 + ["NA/NA"])
    return INFO_VNPU.replace(row, f"| {cells} |")


def hostile_npu_smi(
    directory: Path,
    *,
    templates: str = TEMPLATE_INFO,
    info_vnpu: str = INFO_VNPU,
    template_command: str | None = None,
) -> Path:
    """An `npu-smi` answering the vNPU queries with this test's text (or `template_command`'s
    output), and every other command from the recorded 8 x 910B4 host."""
    base = FakeNpuSmi.from_scenario("910B4_8npu", directory / "base").path
    files = {name: directory / f"{name}.txt" for name in ("templates", "info-vnpu")}
    files["templates"].write_text(templates)
    files["info-vnpu"].write_text(info_vnpu)
    quoted = {name: shlex.quote(str(path)) for name, path in files.items()}
    answer = template_command or f"exec cat {quoted['templates']}"
    script = directory / "npu-smi"
    script.write_text(
        f'#!/bin/sh\ncase "$*" in\n  "info -t template-info") {{ {answer}; }}; exit 0 ;;\n'
        f'  "info -t info-vnpu "*) exec cat {quoted["info-vnpu"]} ;;\nesac\n'
        f'exec {shlex.quote(str(base))} "$@"\n'
    )
    script.chmod(0o755)
    return script


class HostileNode:
    """A Ready Node and the plugin's node graph (`--vnpu=templates`) over a hostile npu-smi."""

    def __init__(self, plane: ControlPlane, root: Path, npu_smi: Path) -> None:
        self.plane = plane
        self.name = f"h{uuid.uuid4().hex[:6]}"
        plane.create_ready_node(self.name)
        settings = defaults(
            node_name=self.name,
            driver_name=f"{self.name}.npu.example",
            device_profile="npu",
            hardware=Hardware("npu_smi"),
            npu_smi_path=npu_smi,
            dev_root=make_dev_root(root / "dev", range(8)),
            sysfs_root=make_sysfs(root / "sys"),
            cdi_root=root / "cdi",
            plugins_dir=root / "plugins",
            vnpu="templates",
        )
        self.container = NodeContainer(
            settings=providers.Object(settings), cluster=KubeCluster(plane.api_client)
        )

    def vnpus_offered(self) -> int:
        """How many vNPU devices the table's offers make, summed over the chips (no layout)."""
        table = self.container.vnpu_table()
        assert table is not None
        offers = [table.vnpu_offer(device=d) for d in self.container.hardware().probe().devices]
        return sum(sum(o.placements(t) for t in o.templates) for o in offers if o is not None)

    def stored_devices(self) -> list[dict[str, Any]]:
        selector = f"--field-selector=spec.nodeName={self.name}"
        listed = self.plane.kubectl("get", "resourceslices", "-o", "json", selector)
        items = json.loads(listed.stdout)["items"]
        return [d for item in items for d in item["spec"].get("devices", [])]


def publish_twice(node: HostileNode, caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """Publish, then probe and publish again: the second round reports nothing new."""
    caplog.set_level(logging.INFO)
    node.container.publisher().publish()
    first = _reports(caplog)
    node.container.publisher().publish()
    assert _reports(caplog) == first, "a problem was reported again by the second publish"
    return node.stored_devices()


def _reports(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def _template_of(device: dict[str, Any]) -> str | None:
    value = (device.get("attributes") or {}).get("vnpuTemplate")
    return None if value is None else str(value["string"])


def _assert_rest_published(devices: list[dict[str, Any]], per_chip: int = PER_CHIP) -> None:
    names = [d["name"] for d in devices]
    assert len(names) == len(set(names)), "duplicate device names"
    assert set(CHIPS) <= set(names), "a whole chip is missing"
    assert {_template_of(d) for d in devices} - {None} <= set(GOOD)
    assert len(names) == len(CHIPS) * (1 + per_chip)


def test_a_template_name_that_is_no_dns_label_is_dropped_and_the_rest_publishes(
    gated_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    npu_smi = hostile_npu_smi(tmp_path / "smi", templates=with_templates("vir05.1c_8g"))
    devices = publish_twice(HostileNode(gated_plane, tmp_path, npu_smi), caplog)

    _assert_rest_published(devices)
    assert {_template_of(d) for d in devices} - {None} == set(GOOD)
    reports = [m for m in _reports(caplog) if "vir05.1c_8g" in m]
    assert len(reports) == 1, reports


def test_a_10_kb_template_name_is_dropped_and_quoted_short(
    gated_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    name = "v" * 10240
    npu_smi = hostile_npu_smi(tmp_path / "smi", templates=with_templates(name))
    devices = publish_twice(HostileNode(gated_plane, tmp_path, npu_smi), caplog)

    _assert_rest_published(devices)
    reports = [m for m in _reports(caplog) if "vvvvvvvv" in m]
    assert len(reports) == 1, [m[:300] for m in reports]
    assert all(len(m) < SHORT for m in reports)


def test_template_names_that_differ_only_by_case_or_dash_keep_the_first(
    gated_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    templates = with_templates("VIR05_1C_8G", "vir05-1c-8g")
    npu_smi = hostile_npu_smi(tmp_path / "smi", templates=templates)
    devices = publish_twice(HostileNode(gated_plane, tmp_path, npu_smi), caplog)

    _assert_rest_published(devices)
    assert {_template_of(d) for d in devices if "vir05" in d["name"]} == {"vir05_1c_8g"}
    for dropped in ("VIR05_1C_8G", "vir05-1c-8g"):
        assert len([m for m in _reports(caplog) if repr(dropped) in m]) == 1, dropped


def test_totals_of_10_to_the_5_publish_at_most_the_id_range_per_template(
    gated_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    npu_smi = hostile_npu_smi(tmp_path / "smi", info_vnpu=with_totals(10**5))
    node = HostileNode(gated_plane, tmp_path, npu_smi)
    assert node.vnpus_offered() <= len(CHIPS) * len(GOOD) * IDS_PER_CHIP  # not ~146 000
    devices = publish_twice(node, caplog)

    _assert_rest_published(devices, per_chip=len(GOOD) * IDS_PER_CHIP)


def test_totals_of_10_to_the_12_leave_the_chips_whole_and_are_reported(
    gated_plane: ControlPlane, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    npu_smi = hostile_npu_smi(tmp_path / "smi", info_vnpu=with_totals(10**12))
    node = HostileNode(gated_plane, tmp_path, npu_smi)
    assert node.vnpus_offered() <= len(CHIPS) * len(GOOD) * IDS_PER_CHIP  # not 10^11 per chip
    devices = publish_twice(node, caplog)

    _assert_rest_published(devices, per_chip=0)
    reports = [m for m in _reports(caplog) if str(10**12) in m]
    assert sorted(c for c in CHIPS for m in reports if re.search(rf"\b{c}\b", m)) == CHIPS


# In a process of its own (so its peak RSS is its own), address space capped so that an unbounded
# read fails there instead of taking the machine: the vNPU table's first chip offer (its error),
# then the probe and layout a publish runs (the length of any error and log line they make).
PROBE_IN_A_PROCESS = """
import json, logging, resource, sys


# This process's own peak RSS: VmHWM, which a new image starts afresh (getrusage's ru_maxrss
# survives exec, so it reported the forking pytest's size: 613 MiB late in a full run).
def peak_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

from pathlib import Path
limit = 1 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.adapters.hardware.vnpu_probe import VnpuProbe
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.pool import desired_slices
logged = [0]
logging.basicConfig(level=logging.INFO, stream=open("/dev/null", "w"))
logging.getLogger().handlers[0].addFilter(lambda r: logged.append(len(r.getMessage())) or True)
smi, root = Path(sys.argv[1]), Path(sys.argv[2])
probe = NpuSmiProbe(node=NodeName("n"), npu_smi=smi, sysfs_root=root / "sys", dev_root=root / "dev")
table = NpuSmiVnpuTable(npu_smi=smi, timeout=60)
def failure(call):
    try:
        call()
    except (DomainError, MemoryError) as failed:
        return str(failed) or type(failed).__name__
    return ""
error = failure(lambda: table.vnpu_offer(device=probe.probe().devices[0]))
published = failure(lambda: desired_slices(
    VnpuProbe(probe, table).probe(), driver=DriverName("d.example"), generation=0))
print(json.dumps({
    "error": error[:2000], "error_chars": len(error), "publish_error_chars": len(published),
    "longest_log": max(logged), "peak_kib": peak_kib(),
}))
"""


def probe_in_a_process(tmp_path: Path, template_command: str) -> dict[str, Any]:
    npu_smi = hostile_npu_smi(tmp_path / "smi", template_command=template_command)
    make_dev_root(tmp_path / "dev", range(8))
    make_sysfs(tmp_path / "sys")
    done = subprocess.run(
        [sys.executable, "-c", PROBE_IN_A_PROCESS, str(npu_smi), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard only, far beyond the seconds this takes
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _header_then(generator: str) -> str:
    """template-info's header lines, then what `generator` prints."""
    header = "\n".join(TEMPLATE_INFO.splitlines()[:5])
    return f"printf '%s\\n' {shlex.quote(header)}; {generator}"


def _assert_refused_in_bounded_memory(result: dict[str, Any], bound: str) -> None:
    assert result["error"].startswith("`npu-smi info -t template-info`: more than"), result
    assert bound in result["error"]
    lengths = (result["error_chars"], result["publish_error_chars"], result["longest_log"])
    assert max(lengths) < SHORT
    assert result["peak_kib"] < PEAK_RSS_MIB * 1024


def test_a_20_mib_line_is_refused_at_the_read_bound_in_bounded_memory(tmp_path: Path) -> None:
    """One template whose name is 20 MiB long: once copied whole into an error and the log."""
    twenty_mib = "head -c 20971520 /dev/zero | tr '\\0' v"
    line = f"printf '|'; {twenty_mib}; printf ' 5 8 1 2 0 6 |\\n| 0 0 1 |\\n'"
    _assert_refused_in_bounded_memory(probe_in_a_process(tmp_path, _header_then(line)), "MiB")


def test_20_million_short_lines_are_refused_at_the_read_bound_in_bounded_memory(
    tmp_path: Path,
) -> None:
    lines = _header_then("yes '|' | head -n 20000000")
    _assert_refused_in_bounded_memory(probe_in_a_process(tmp_path, lines), "lines")
