"""The real NVML path on the C stand-in for libnvidia-ml.so.1: nvidia-ml-py's pynvml, our
PynvmlLibrary and NvmlProbe, with the library found either under --driver-root and loaded by its
path (no LD_LIBRARY_PATH, as the GPU profile's DaemonSet runs them) or by the dynamic loader's
search through LD_LIBRARY_PATH. pynvml keeps the library it loaded for the process
(`pynvml.nvmlLib`), so each case runs in a process of its own and prints JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.nvml_stub import StubGpu, build_library, write_host

H100 = "NVIDIA H100 80GB HBM3"
GPUS = [
    StubGpu(0, 0, "GPU-0a", H100, 80 << 30, "00000000:18:00.0", (9, 0), 0),
    StubGpu(1, 3, "GPU-1b", H100, 80 << 30, "00000000:2A:00.0", (9, 0), 1),
]
LIB_DIR = "root/usr/lib/x86_64-linux-gnu"
# argv[1]: the library's path, or "" for the loader's search (LD_LIBRARY_PATH)
FACTS = """
import attrs, json, sys
from pathlib import Path
from npu_dra.adapters.hardware.nvml.library import NvmlError
from npu_dra.adapters.hardware.nvml.pynvml_library import PynvmlLibrary
library = PynvmlLibrary(Path(sys.argv[1]) if sys.argv[1] else None)
try:
    gpus = [attrs.asdict(g) for g in library.gpus()]
    system = library.system()
    out = {"gpus": gpus, "driver": system.driver_version, "cuda": system.cuda_driver_version,
           "xids": [library.critical_xids(), library.critical_xids()]}
except NvmlError as error:
    out = {"error": str(error)}
print(json.dumps(out))
"""
PROBE = """
import json
from pathlib import Path
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.adapters.hardware.nvml.probe import NvmlProbe
from npu_dra.adapters.hardware.nvml.pynvml_library import PynvmlLibrary
from npu_dra.domain.ids import NodeName
host = NvidiaHostPaths(dev_root=Path("dev"), driver_root=Path("root"))
probe = NvmlProbe(node=NodeName("gpu-node"), library=PynvmlLibrary(host.library()), host=host)
rounds = [probe.probe(), probe.probe()]
print(json.dumps({
    "devices": [[[d.name, d.uuid, d.health.value, d.pci_bus_id, d.numa_node, d.physical_id]
                 for d in inventory.devices] for inventory in rounds],
    "nodes": sorted(rounds[0].host.device_nodes),
    "files": [f.container_path for f in rounds[0].host.driver_files],
}))
"""


def driver_root(tmp_path: Path, **host: Any) -> Path:
    libs = tmp_path / LIB_DIR
    libs.mkdir(parents=True)
    shutil.copyfile(build_library(), libs / "libnvidia-ml.so.1")
    write_host(tmp_path / "host.txt", GPUS, **host)
    return tmp_path / "root"


def run(
    tmp_path: Path,
    *argv: str,
    host_file: Path | None = None,
    library_path: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["NVML_STUB_HOST"] = str(host_file or tmp_path / "host.txt")
    if library_path is not None:
        env["LD_LIBRARY_PATH"] = str(library_path)
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=False, env=env, cwd=tmp_path
    )


def script(tmp_path: Path, code: str, *argv: str, **options: Any) -> dict[str, Any]:
    result = run(tmp_path, sys.executable, "-c", code, *argv, **options)
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def facts(tmp_path: Path, root: Path, host_file: Path | None = None) -> dict[str, Any]:
    library = root / "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
    return script(tmp_path, FACTS, str(library), host_file=host_file)


@pytest.mark.parametrize("route", ["by its path", "through LD_LIBRARY_PATH"])
def test_the_binding_reads_every_fact_of_the_described_gpus(tmp_path: Path, route: str) -> None:
    root = driver_root(tmp_path, driver="580.95.05", cuda=12080)
    if route == "by its path":
        found = facts(tmp_path, root)
    else:
        found = script(tmp_path, FACTS, "", library_path=tmp_path / LIB_DIR)
    assert (found["driver"], found["cuda"]) == ("580.95.05", 12080)
    assert [g["uuid"] for g in found["gpus"]] == ["GPU-0a", "GPU-1b"]
    second = found["gpus"][1]
    assert (second["index"], second["minor"], second["uuid"]) == (1, 3, "GPU-1b")
    assert (second["name"], second["memory_bytes"]) == (H100, 80 << 30)
    assert second["pci_bus_id"] == "00000000:2A:00.0"
    assert (second["compute_capability"], second["numa_node"]) == ([9, 0], 1)
    assert (second["brand"], second["architecture"], second["mig_enabled"]) == (
        "NVIDIA",
        "Hopper",
        False,
    )


def test_an_xid_event_is_reported_once_naming_its_gpu(tmp_path: Path) -> None:
    found = facts(tmp_path, driver_root(tmp_path, xids=[(1, 79)]))
    assert found["xids"] == [[["GPU-1b", 79]], []]


def test_a_host_without_the_driver_fails_naming_the_call(tmp_path: Path) -> None:
    root = driver_root(tmp_path)
    found = facts(tmp_path, root, host_file=tmp_path / "missing.txt")
    assert found["error"].startswith("nvmlInit")
    assert "Driver Not Loaded" in found["error"]


def test_the_probe_publishes_each_gpu_and_keeps_a_critical_xid(tmp_path: Path) -> None:
    driver_root(tmp_path, xids=[(1, 79)])
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/nvidiactl").touch()
    found = script(tmp_path, PROBE)
    first, second = found["devices"]
    assert first == [
        ["gpu-0", "GPU-0a", "Healthy", "0000:18:00.0", 0, 0],
        ["gpu-1", "GPU-1b", "Unhealthy", "0000:2a:00.0", 1, 3],
    ]
    assert second == first  # the event was delivered once; the GPU stays Unhealthy
    assert found["nodes"] == ["nvidiactl"]
    assert any(f.endswith("/libnvidia-ml.so.1") for f in found["files"])


def test_discover_finds_the_library_under_the_driver_root_without_a_library_path(
    tmp_path: Path,
) -> None:
    root = driver_root(tmp_path)
    result = run(
        tmp_path,
        sys.executable, "-m", "npu_dra.app.cli", "discover", "--device-profile=gpu",
        f"--driver-root={root}", "--host-driver-root=/run/nvidia/driver",
        f"--dev-root={tmp_path}", "--node-name=gpu-node", "--output=json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert [d["name"] for d in found["devices"]] == ["gpu-0", "gpu-1"]
    [library] = found["host"]["driverFiles"]
    assert library["hostPath"] == ("/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")
    [pool] = found["resourceSlices"]
    minors = [d["attributes"]["minor"]["int"] for d in pool["spec"]["devices"]]
    assert minors == [0, 3]


def test_the_description_takes_one_word_ids_and_a_one_line_name(tmp_path: Path) -> None:
    bad = StubGpu(0, 0, "GPU 0", H100, 1 << 30, "00000000:18:00.0")
    with pytest.raises(ValueError, match="one-word ids"):
        write_host(tmp_path / "host.txt", [bad])
