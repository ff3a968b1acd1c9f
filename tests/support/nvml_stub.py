"""The stand-in libnvidia-ml.so.1 as tests drive it: compiled once, fed a host description file.

`build_library()` compiles tests/support/nvml_stub/nvml_stub.c with the system `cc` into
~/.cache/npu-dra/nvml-stub/<source hash>/libnvidia-ml.so.1 (`NPU_DRA_NVML_STUB_CACHE` overrides),
with the soname the real library has, so a process that loads it by path answers pynvml's
`CDLL("libnvidia-ml.so.1")` with it, as does one whose LD_LIBRARY_PATH names its directory.
`write_host(path, gpus, xids=...)` writes the GPUs it reports and the XID critical-error events
it delivers (each once); the process finds the file through NVML_STUB_HOST, which the stub reads
at nvmlInit (unset or unreadable: NVML_ERROR_DRIVER_NOT_LOADED, a host without the driver).
"""

import fcntl
import hashlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import attrs

from tests.support.dcmi_stub import ensure_compiler

SOURCE = Path(__file__).resolve().parent / "nvml_stub" / "nvml_stub.c"
LIBRARY = "libnvidia-ml.so.1"


@attrs.frozen
class StubGpu:
    index: int
    minor: int
    uuid: str
    name: str
    memory_bytes: int
    pci_bus_id: str  # 00000000:18:00.0
    compute_capability: tuple[int, int] = (9, 0)
    numa_node: int = 0

    def line(self) -> str:
        words = (self.uuid, self.pci_bus_id)
        if any(len(w.split()) != 1 for w in words) or not self.name.strip() or "\n" in self.name:
            raise ValueError(f"{self}: the stub's format takes one-word ids and a one-line name")
        major, minor = self.compute_capability
        return (
            f"gpu {self.index} {self.minor} {self.uuid} {self.memory_bytes} {self.pci_bus_id} "
            f"{major} {minor} {self.numa_node} {self.name}"
        )


def build_library() -> Path:
    """libnvidia-ml.so.1 built from the stub's source, cached by its hash."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    default = Path.home() / ".cache" / "npu-dra" / "nvml-stub"
    directory = Path(os.environ.get("NPU_DRA_NVML_STUB_CACHE", default)) / digest
    library = directory / LIBRARY
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not library.exists():
            ensure_compiler("the NVML stand-in")
            partial = directory / f"{LIBRARY}.partial"
            command = ["cc", "-std=c99", "-O2", "-Wall", "-Werror", "-shared", "-fPIC"]
            command += [f"-Wl,-soname,{LIBRARY}", "-o", str(partial)]
            subprocess.run([*command, str(SOURCE)], check=True, capture_output=True, timeout=120)
            partial.rename(library)
    return library


def write_host(
    path: Path,
    gpus: Sequence[StubGpu],
    *,
    driver: str = "580.95.05",
    cuda: int = 13000,
    xids: Sequence[tuple[int, int]] = (),
) -> Path:
    """The description the stub reads at nvmlInit: driver, CUDA version, GPUs, XID events."""
    lines = [f"driver {driver}", f"cuda {cuda}", *(g.line() for g in gpus)]
    lines += [f"xid {index} {code}" for index, code in xids]
    partial = path.with_suffix(".partial")
    partial.write_text("\n".join(lines) + "\n")
    partial.rename(path)  # the stub never reads half a file
    return path
