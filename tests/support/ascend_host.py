"""A fake Ascend host at the real host paths, for the real node: what the seed's manifests mount.

The seed's pods and the DaemonSet mount `/usr/local/Ascend` and `/usr/local/bin/npu-smi` from the
host and the plugin checks `/dev/davinci<N>`, so a real node needs them where a real Ascend server
has them:

- real character device nodes (`mknod`) for `davinci<N>`, `davinci_manager`, `devmm_svm` and
  `hisi_hdc`, with a major number from the range Linux reserves for local use (no driver answers
  them: opening one fails with ENXIO, so nothing can misuse them);
- `npu-smi`: a POSIX shell script that prints the recorded outputs of a scenario, so it runs in
  any container with a `/bin/sh` (the plugin's and the business pods') without Python;
- `<ascend root>/driver/lib64/{common,driver}` and `driver/version.info`, the files the CDI spec
  mounts read-only;
- `<ascend root>/driver/tools/hccn_tool`: a shell script answering `-i <N> -ip -g` as the real
  tool does (adapters/hardware/npu_smi/hccn.py names the source) with 192.168.100.<101+N>/24.

Nothing that already exists is touched: installing over a real (or foreign) file fails with its
name, and `remove` deletes exactly what `install` created.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from npu_dra.adapters.hardware.npu_smi.replay import recorded
from tests.support.fake_npu_smi import SCENARIOS

LOCAL_MAJOR = 241  # Documentation/admin-guide/devices.txt: 240-254 char, LOCAL/EXPERIMENTAL USE
SHARED_MINORS = {"davinci_manager": 200, "devmm_svm": 201, "hisi_hdc": 202}
MARKER = "fake-ascend-host: created by the npu-dra e2e tests"

HCCN_TOOL = f"""#!/bin/sh
# {MARKER}
[ "$1" = "-i" ] && [ "$3" = "-ip" ] && [ "$4" = "-g" ] || {{ echo "unsupported: $*" >&2; exit 1; }}
echo "ipaddr:192.168.100.$(($2 + 101))"
echo "netmask:255.255.255.0"
"""


def device_ip(physical_id: int) -> str:
    """What the fake hccn_tool says of chip `physical_id`."""
    return f"192.168.100.{physical_id + 101}/24"


class HostPathTaken(RuntimeError):
    """A path the fake host needs already exists and was not made by it."""


def claim(created: list[Path], path: Path, vendor: str) -> Path:
    """`path`, recorded in `created`, if nothing is there; HostPathTaken otherwise."""
    if path.exists() or path.is_symlink():
        raise HostPathTaken(
            f"{path} exists: the real-node tests install a fake host there and never overwrite; "
            f"run them on a machine without {vendor}, or remove it"
        )
    created.append(path)
    return path


def remove_created(created: list[Path]) -> None:
    """Delete what `claim` recorded, last first (files, then their directories)."""
    for path in reversed(created):
        with contextlib.suppress(FileNotFoundError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
    created.clear()


def shell_npu_smi(scenario: str) -> str:
    """A `/bin/sh` script answering the scenario's commands with their recorded outputs."""
    path = SCENARIOS / f"{scenario}.yaml"
    manifest = yaml.safe_load(path.read_text())
    arms = []
    for entry in manifest["commands"]:
        text = recorded((path.parent / entry["file"]).resolve())
        if "NPU_DRA_EOF" in text:
            raise ValueError(f"{entry['file']} contains the heredoc delimiter")
        arms.append(
            f'"{" ".join(entry["args"])}")\n'
            f"  cat <<'NPU_DRA_EOF'\n{text.rstrip()}\nNPU_DRA_EOF\n  ;;"
        )
    return (
        "#!/bin/sh\n"
        f"# {MARKER}; replays tests/fixtures/npu-smi/scenarios/{scenario}.yaml\n"
        'case "$*" in\n'
        + "\n".join(arms)
        + '\n*)\n  echo "Error: fake npu-smi has no recording for: $*" >&2\n  exit 1\n  ;;\nesac\n'
    )


@dataclass
class FakeAscendHost:
    physical_ids: Sequence[int]
    scenario: str = "910B4_8npu"
    dev_dir: Path = Path("/dev")
    ascend_root: Path = Path("/usr/local/Ascend")
    npu_smi: Path = Path("/usr/local/bin/npu-smi")
    only_devices: bool = False  # just the device nodes (a second /dev beside an installed host)
    created: list[Path] = field(default_factory=list)

    def device_numbers(self) -> dict[str, tuple[int, int]]:
        """Node name under /dev -> (major, minor)."""
        numbers = {f"davinci{n}": (LOCAL_MAJOR, n) for n in self.physical_ids}
        numbers.update({name: (LOCAL_MAJOR, m) for name, m in SHARED_MINORS.items()})
        return numbers

    def install(self) -> FakeAscendHost:
        try:
            for name, (major, minor) in self.device_numbers().items():
                path = self._claim(self.dev_dir / name)
                os.mknod(path, 0o660 | stat.S_IFCHR, os.makedev(major, minor))
                path.chmod(0o660)  # mknod honours the umask
            if self.only_devices:
                return self
            self._claim_dir(self.ascend_root)
            for directory in (
                "driver",
                "driver/lib64",
                "driver/lib64/common",
                "driver/lib64/driver",
                "driver/tools",
            ):
                self._claim_dir(self.ascend_root / directory)
            version = self._claim(self.ascend_root / "driver" / "version.info")
            version.write_text(f"# {MARKER}\nVersion=25.0.rc1.1\n")
            hccn = self._claim(self.ascend_root / "driver" / "tools" / "hccn_tool")
            hccn.write_text(HCCN_TOOL)
            hccn.chmod(0o755)
            smi = self._claim(self.npu_smi)
            smi.write_text(shell_npu_smi(self.scenario))
            smi.chmod(0o755)
        except BaseException:
            self.remove()
            raise
        return self

    def remove(self) -> None:
        remove_created(self.created)

    def _claim(self, path: Path) -> Path:
        return claim(self.created, path, "Ascend software")

    def _claim_dir(self, path: Path) -> None:
        self._claim(path).mkdir()


@contextlib.contextmanager
def fake_ascend_host(physical_ids: Sequence[int], **paths: Path) -> Iterator[FakeAscendHost]:
    host = FakeAscendHost(physical_ids, **paths).install()  # type: ignore[arg-type]
    try:
        yield host
    finally:
        host.remove()
