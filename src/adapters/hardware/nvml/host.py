"""Which NVIDIA device nodes and driver files this host has (presence is I/O, found here).

Host paths come from the plugin's flags (`--dev-root`, `--driver-root`); the libraries land in
one container directory the GPU profile puts on LD_LIBRARY_PATH, nvidia-smi at /usr/bin. Where
the plugin runs in a container that mounts the host's driver root elsewhere (the chart mounts it
at /driver-root), `--host-driver-root` says where that tree is on the host: files are looked for
under `driver_root` and named under `host_driver_root` in the CDI specs the runtime reads.
"""

from pathlib import Path

import attrs

from npu_dra.adapters.hardware.ascend_host import exists
from npu_dra.domain.device import HostFile, HostFiles
from npu_dra.domain.profile import NVIDIA_LIB_DIR

SHARED_NODE_NAMES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
# What CUDA and nvidia-smi need in a container (the NVIDIA container toolkit's "utility" and
# "compute" sets, the libraries that exist on most drivers).
NVML_LIBRARY = "libnvidia-ml.so.1"
LIBRARIES = (
    NVML_LIBRARY,
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
    host_driver_root: Path | None = None  # the same tree on the host; None: driver_root

    def driver_files(self) -> tuple[HostFile, ...]:
        files = [
            HostFile(self._on_host(self.driver_root / b), f"/{b}")
            for b in BINARIES
            if exists(self.driver_root / b)
        ]
        for library in LIBRARIES:
            found = self.library(library)
            if found is not None:
                files.append(HostFile(self._on_host(found), f"{NVIDIA_LIB_DIR}/{library}"))
        return tuple(files)

    def library(self, name: str = NVML_LIBRARY) -> Path | None:
        """Where this process finds a driver library under driver_root (None: nowhere)."""
        candidates = (self.driver_root / d / name for d in LIBRARY_DIRS)
        return next((path for path in candidates if exists(path)), None)

    def _on_host(self, found: Path) -> str:
        """The host's name for a file found under driver_root: its link resolved (the runtime
        bind-mounts the versioned library) where that stays in the tree, else its own path."""
        resolved = found.resolve()
        root = self.driver_root.resolve()
        if resolved.is_relative_to(root):
            here, relative = resolved, resolved.relative_to(root)
        else:
            here, relative = found, found.relative_to(self.driver_root)
        return str(here if self.host_driver_root is None else self.host_driver_root / relative)

    def host_files(self, *, shared_nodes: frozenset[str] | None = None) -> HostFiles:
        present = frozenset(n for n in SHARED_NODE_NAMES if exists(self.dev_root / n))
        return HostFiles(
            str(self.dev_root),
            present if shared_nodes is None else shared_nodes,
            self.driver_files(),
        )
