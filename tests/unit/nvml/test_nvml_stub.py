"""The real NVML path on the C stand-in for libnvidia-ml.so.1: nvidia-ml-py's pynvml, our
PynvmlLibrary and NvmlProbe, the library found under --driver-root and loaded by its path (no
LD_LIBRARY_PATH), as the GPU profile's DaemonSet runs them. pynvml keeps the library it loaded
for the process, so each case runs in a process of its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.nvml_stub import StubGpu, build_library, write_host

H100 = "NVIDIA H100 80GB HBM3"
GPUS = [
    StubGpu(0, 0, "GPU-0a", H100, 80 << 30, "00000000:18:00.0", (9, 0), 0),
    StubGpu(1, 3, "GPU-1b", H100, 80 << 30, "00000000:2A:00.0", (9, 0), 1),
]
FACTS = """
import json, sys
from pathlib import Path
from npu_dra.adapters.hardware.nvml.library import NvmlError
from npu_dra.adapters.hardware.nvml.pynvml_library import PynvmlLibrary
library = PynvmlLibrary(Path(sys.argv[1]))
try:
    gpus = [vars(g) if not hasattr(g, "__attrs_attrs__") else
            {a.name: getattr(g, a.name) for a in g.__attrs_attrs__} for g in library.gpus()]
    system = library.system()
    out = {"gpus": gpus, "driver": system.driver_version, "cuda": system.cuda_driver_version,
           "xids": [library.critical_xids(), library.critical_xids()]}
except NvmlError as error:
    out = {"error": str(error)}
print(json.dumps(out))
"""


def driver_root(tmp_path: Path, **host: Any) -> Path:
    libs = tmp_path / "root/usr/lib/x86_64-linux-gnu"
    libs.mkdir(parents=True)
    shutil.copyfile(build_library(), libs / "libnvidia-ml.so.1")
    write_host(tmp_path / "host.txt", GPUS, **host)
    return tmp_path / "root"


def run(
    tmp_path: Path, *argv: str, host_file: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["NVML_STUB_HOST"] = str(host_file or tmp_path / "host.txt")
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=60, check=False, env=env, cwd=tmp_path
    )


def facts(tmp_path: Path, root: Path, host_file: Path | None = None) -> dict[str, Any]:
    library = root / "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
    result = run(tmp_path, sys.executable, "-c", FACTS, str(library), host_file=host_file)
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def test_the_binding_reads_every_fact_of_the_described_gpus(tmp_path: Path) -> None:
    found = facts(tmp_path, driver_root(tmp_path, driver="580.95.05", cuda=12080))
    assert (found["driver"], found["cuda"]) == ("580.95.05", 12080)
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
