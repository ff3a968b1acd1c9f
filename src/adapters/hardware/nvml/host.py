"""Which NVIDIA device nodes and driver files this host has (presence is I/O, found here).

Host paths come from the plugin's flags (`--dev-root`, `--driver-root`); the libraries land in
one container directory the GPU profile puts on LD_LIBRARY_PATH, nvidia-smi at /usr/bin.
"""

from pathlib import Path

import attrs

from npu_dra.adapters.hardware.ascend_host import exists
from npu_dra.domain.device import HostFile, HostFiles
from npu_dra.domain.profile import NVIDIA_LIB_DIR

SHARED_NODE_NAMES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
# What CUDA and nvidia-smi need in a container (the NVIDIA container toolkit's "utility" and
# "compute" sets, the libraries that exist on most drivers).
LIBRARIES = (
    "libnvidia-ml.so.1",
    "libcuda.so.1",
    "libnvidia-ptxjitcompiler.so.1",
    "libnvidia-nvvm.so.4",
    "libcudadebugger.so.1",
)
# Debian/Ubuntu multiarch directories (x86_64, and aarch64 for arm64 hosts), RHEL's lib64, the
# GPU operator's driver container, then the plain ones.
LIBRARY_DIRS = (
    "usr/lib/x86_64-linux-gnu",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib64",
    "usr/local/nvidia/lib64",
    "lib",
    "usr/lib",
)
BINARIES = ("usr/bin/nvidia-smi",)


@attrs.frozen
class NvidiaHostPaths:
    dev_root: Path = Path("/dev")
    driver_root: Path = Path("/")  # where the driver is installed (/run/nvidia/driver: operator)

    def driver_files(self) -> tuple[HostFile, ...]:
        files = [
            HostFile(str(self.driver_root / b), f"/{b}")
            for b in BINARIES
            if exists(self.driver_root / b)
        ]
        for library in LIBRARIES:
            found = next(
                (
                    self.driver_root / d / library
                    for d in LIBRARY_DIRS
                    if exists(self.driver_root / d / library)
                ),
                None,
            )
            if found is not None:
                files.append(HostFile(str(found.resolve()), f"{NVIDIA_LIB_DIR}/{library}"))
        return tuple(files)

    def host_files(self, *, shared_nodes: frozenset[str] | None = None) -> HostFiles:
        present = frozenset(n for n in SHARED_NODE_NAMES if exists(self.dev_root / n))
        return HostFiles(
            str(self.dev_root),
            present if shared_nodes is None else shared_nodes,
            self.driver_files(),
        )
