"""A fake NVIDIA host for the real node: the device nodes and the driver files the GPU profile's
DaemonSet and CDI specs use, with the C stand-in for libnvidia-ml.so.1 (tests/support/nvml_stub)
as the driver's NVML, so the plugin's container runs the real `nvml` backend (nvidia-ml-py) on it.

- real character device nodes (`mknod`) `nvidia<minor>`, `nvidiactl`, `nvidia-uvm` and
  `nvidia-uvm-tools`, with a major number Linux reserves for local use (no driver answers them);
- `<driver root>/usr/bin/nvidia-smi`: a POSIX shell script naming the GPU device nodes it sees,
  so a business container with a `/bin/sh` shows which GPUs it was given;
- `<driver root>/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1`: the stand-in, and beside it
  `nvml-stub-host.txt`, the GPUs it reports (NVML_STUB_HOST names it).

Nothing that already exists is touched, and `remove` deletes exactly what `install` created.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ascend_host import claim, remove_created
from tests.support.nvml_stub import StubGpu, build_library, write_host

LOCAL_MAJOR = 242  # Documentation/admin-guide/devices.txt: 240-254 char, LOCAL/EXPERIMENTAL USE
SHARED_MINORS = {"nvidiactl": 255, "nvidia-uvm": 254, "nvidia-uvm-tools": 253}
LIBRARY_DIR = "usr/lib/x86_64-linux-gnu"
MARKER = "fake-nvidia-host: created by the npu-dra e2e tests"
NVIDIA_SMI = f"""#!/bin/sh
# {MARKER}
echo "NVIDIA-SMI (fake) sees:"
for node in /dev/nvidia[0-9]*; do [ -e "$node" ] && echo "$node"; done
exit 0
"""


def stub_gpus(count: int) -> list[StubGpu]:
    return [
        StubGpu(
            index=n,
            minor=n,
            uuid=f"GPU-0000000{n}-e2e0-4000-8000-00000000000{n}",
            name="NVIDIA H100 80GB HBM3",
            memory_bytes=80 << 30,
            pci_bus_id=f"00000000:{0x18 + n:02X}:00.0",
            numa_node=n // 4,
        )
        for n in range(count)
    ]


@dataclass
class FakeNvidiaHost:
    count: int
    driver_root: Path  # a directory of its own on the host
    dev_dir: Path = Path("/dev")
    created: list[Path] = field(default_factory=list)

    @property
    def stub_host_file(self) -> Path:
        return self.driver_root / LIBRARY_DIR / "nvml-stub-host.txt"

    def install(self) -> FakeNvidiaHost:
        try:
            numbers = {f"nvidia{n}": n for n in range(self.count)} | SHARED_MINORS
            for name, minor in numbers.items():
                path = self._claim(self.dev_dir / name)
                os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(LOCAL_MAJOR, minor))
                path.chmod(0o666)  # mknod honours the umask
            for directory in ("", "usr", "usr/bin", "usr/lib", LIBRARY_DIR):
                self._claim(self.driver_root / directory).mkdir()
            smi = self._claim(self.driver_root / "usr/bin/nvidia-smi")
            smi.write_text(NVIDIA_SMI)
            smi.chmod(0o755)
            library = self._claim(self.driver_root / LIBRARY_DIR / "libnvidia-ml.so.1")
            shutil.copyfile(build_library(), library)
            write_host(self._claim(self.stub_host_file), stub_gpus(self.count))
        except BaseException:
            self.remove()
            raise
        return self

    def remove(self) -> None:
        remove_created(self.created)

    def _claim(self, path: Path) -> Path:
        return claim(self.created, path, "NVIDIA's driver")


@contextlib.contextmanager
def fake_nvidia_host(count: int, driver_root: Path) -> Iterator[FakeNvidiaHost]:
    host = FakeNvidiaHost(count, driver_root).install()
    try:
        yield host
    finally:
        host.remove()
