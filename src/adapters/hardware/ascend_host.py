"""Which Ascend driver files and shared device nodes this host has: presence is I/O, found here.

The domain decides what a container gets (per chip family, ascend-facts B.1/B.2); it needs to
know what exists. The host paths are the plugin's flags (`--dev-root`, `--npu-smi`,
`--ascend-root`, `--dcmi-dir`, `--ascend-install-info`); the container paths are the standard
ones the Ascend runtime uses, so software in the container finds the driver where it expects.
"""

from pathlib import Path

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.device import HostFile, HostFiles

SHARED_NODE_NAMES = (
    "davinci_manager",
    "davinci_manager_docker",
    "devmm_svm",
    "hisi_hdc",
    "dvpp_cmdlist",
)
DEFAULT_NPU_SMI = Path("/usr/local/bin/npu-smi")
DEFAULT_ASCEND_ROOT = Path("/usr/local/Ascend")
DEFAULT_DCMI_DIR = Path("/usr/local/dcmi")
DEFAULT_INSTALL_INFO = Path("/etc/ascend_install.info")


@attrs.frozen
class AscendHostPaths:
    """Where this host keeps the Ascend driver's device nodes and files."""

    dev_root: Path = Path("/dev")
    npu_smi: Path = DEFAULT_NPU_SMI
    ascend_root: Path = DEFAULT_ASCEND_ROOT
    dcmi_dir: Path = DEFAULT_DCMI_DIR
    install_info: Path = DEFAULT_INSTALL_INFO

    def candidates(self) -> tuple[HostFile, ...]:
        """Every driver file a container may get: host path -> standard container path."""
        driver = self.ascend_root / "driver"
        return (
            HostFile(str(self.npu_smi), str(DEFAULT_NPU_SMI)),
            HostFile(str(driver / "lib64"), str(DEFAULT_ASCEND_ROOT / "driver" / "lib64")),
            HostFile(
                str(driver / "version.info"), str(DEFAULT_ASCEND_ROOT / "driver" / "version.info")
            ),
            HostFile(str(self.dcmi_dir), str(DEFAULT_DCMI_DIR)),
            HostFile(str(self.install_info), str(DEFAULT_INSTALL_INFO)),
        )

    def driver_files(self) -> tuple[HostFile, ...]:
        return tuple(f for f in self.candidates() if exists(Path(f.host_path)))

    def shared_nodes(self) -> frozenset[str]:
        return frozenset(n for n in SHARED_NODE_NAMES if exists(self.dev_root / n))

    def host_files(self, *, shared_nodes: frozenset[str] | None = None) -> HostFiles:
        """What this host has; `shared_nodes` replaces the /dev check (fake hardware)."""
        nodes = self.shared_nodes() if shared_nodes is None else shared_nodes
        return HostFiles(str(self.dev_root), nodes, self.driver_files())


def exists(path: Path) -> bool:
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except OSError as error:
        raise ProbeError(f"{path}: {error.strerror or error}") from error
    return True
