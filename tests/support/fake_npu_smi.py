"""The fake npu-smi as tests drive it: a scenario copied into a temp dir and an executable path.

`FakeNpuSmi.from_scenario("910B4_8npu", tmp_path)` gives `fake.path`, an `npu-smi` script for
NpuSmiProbe or `npu-dra discover --npu-smi`. Its manifest is re-read on every call, so a test can
change what npu-smi answers while the code under test runs (`set_health`, `set_answer`), and
`calls()` lists the invocations so tests can count them.

`set_fault(prefix, ...)` makes every call whose arguments start with `prefix` fail, hang or print
what the test says, vNPU commands included (the replay answers those from its live table, which
`set_answer` cannot reach): from then on the launcher runs this file, which answers a matching
call itself and hands any other to the replay.

`info|set -t device-share` (a chip's container-sharing mode) answer from the replay's live state
(replay_device_share.py): `without_device_share()` makes the chips have no such mode, `reboot()`
turns every chip's mode off, as a reboot does, and `device_share_on()` says which chips have it.

`make_vnpu_nodes(dev_root)` makes the fake act as the driver does for a vNPU: `set -t create-vnpu`
that succeeds makes its character device `<dev_root>/vdavinci<id>`, `destroy-vnpu` removes it
(the launcher runs this file from then on too), so a container can be given the vNPU on a real
node. It needs the right to `mknod` (root).
"""

import json
import os
import shlex
import stat
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from npu_dra.adapters.hardware.npu_smi.replay import write_launcher
from npu_dra.adapters.hardware.npu_smi.replay_device_share import STATE_FILE as SHARE_STATE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "npu-smi"
SCENARIOS = FIXTURES / "scenarios"
INFO = ("info",)
MAP = ("info", "-m")
TOPO = ("info", "-t", "topo")
# vNPU nodes: a major of the range Linux reserves for local use (as ascend_host's chips, which
# have 241), minor the vNPU's id; no driver answers it, so opening one fails with ENXIO.
VNPU_MAJOR = 242
VNPU_DEV_ENV = "FAKE_NPU_SMI_VNPU_DEV"
CREATE_VNPU = ["set", "-t", "create-vnpu"]
DESTROY_VNPU = ["set", "-t", "destroy-vnpu"]


def scenario_names() -> list[str]:
    return sorted(path.stem for path in SCENARIOS.glob("*.yaml"))


def load_scenario(name: str) -> dict[str, Any]:
    """The scenario manifest with every `file:` made absolute, ready to be copied elsewhere."""
    import yaml  # here, not at the top: the launcher runs this file on every faulty call

    path = SCENARIOS / f"{name}.yaml"
    manifest: dict[str, Any] = yaml.safe_load(path.read_text())
    for entry in manifest["commands"]:
        if "file" in entry:
            entry["file"] = str((path.parent / entry["file"]).resolve())
    return manifest


class FakeNpuSmi:
    def __init__(self, directory: Path, manifest: Mapping[str, Any]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.manifest_path = directory / "manifest.yaml"
        self.log_path = directory / "calls.log"
        self.manifest: dict[str, Any] = dict(manifest)
        self._write()
        self._env = {
            "FAKE_NPU_SMI_MANIFEST": str(self.manifest_path),
            "FAKE_NPU_SMI_LOG": str(self.log_path),
        }
        self.path = write_launcher(directory / "npu-smi", env=self._env)

    @classmethod
    def from_scenario(cls, name: str, directory: Path) -> "FakeNpuSmi":
        return cls(directory, load_scenario(name))

    @property
    def davinci_count(self) -> int:
        return int(self.manifest.get("davinci_count", 0))

    def set_health(self, card: int, word: str, *, chip: int | None = None) -> None:
        """From the next call on, `npu-smi info` shows `word` as the chip's (or card's) health."""
        key = str(card) if chip is None else f"{card}/{chip}"
        self.manifest["health"] = {**self.manifest.get("health", {}), key: word}
        self._write()

    def set_answer(self, args: Iterable[str], **answer: Any) -> None:
        """Change one command's recording: `exit=1`, `delay=30`, `garbage=...`, `truncate=9`..."""
        wanted = list(args)
        entries = [e for e in self.manifest["commands"] if e["args"] != wanted]
        current = next((e for e in self.manifest["commands"] if e["args"] == wanted), {})
        if "stdout" in answer:
            current = {k: v for k, v in current.items() if k != "file"}
        self.manifest["commands"] = [*entries, {**current, **answer, "args": wanted}]
        self._write()

    def set_fault(
        self,
        prefix: Sequence[str],
        *,
        exit: int = 0,  # the manifest's word, as set_answer's
        delay: float = 0.0,
        stdout: str = "",
        stderr: str = "",
    ) -> None:
        """From the next call on, any `npu-smi <prefix> ...` answers this instead: `exit=1`
        fails, `delay=3600` hangs, `stdout=` prints garbage or odd numbers."""
        fault = {"args": list(prefix), "exit": exit, "delay": delay}
        fault |= {"stdout": stdout, "stderr": stderr}
        kept = [f for f in self.manifest.get("faults", []) if f["args"] != list(prefix)]
        self.manifest["faults"] = [*kept, fault]
        self._write()
        self._launch_through_faults()

    def make_vnpu_nodes(self, dev_root: Path) -> None:
        """From the next call on, a vNPU created gets its node `dev_root/vdavinci<id>` and a vNPU
        destroyed loses it, as the driver does (module docstring)."""
        self._env[VNPU_DEV_ENV] = str(dev_root)
        self._launch_through_faults()

    def without_device_share(self) -> None:
        """From the next call on, the chips have no container-sharing mode (910A, 950)."""
        self.manifest["device_share"] = False
        self._write()

    def reboot(self) -> None:
        """Every chip's container-sharing mode off, as after a reboot."""
        (self.directory / SHARE_STATE).unlink(missing_ok=True)

    def device_share_on(self) -> set[str]:
        """The chips (`card/chip`) whose container-sharing mode is on."""
        path = self.directory / SHARE_STATE
        state = json.loads(path.read_text()) if path.exists() else {}
        return {chip for chip, on in state.items() if on}

    def clear_faults(self) -> None:
        self.manifest.pop("faults", None)
        self._write()

    def set_delay(self, seconds: float) -> None:
        self.manifest["delay"] = seconds
        self._write()

    def calls(self) -> list[str]:
        if not self.log_path.exists():
            return []
        return self.log_path.read_text().splitlines()

    def _launch_through_faults(self) -> None:
        """The launcher runs this file (which hands unmatched calls to the replay, and makes vNPU
        nodes where asked), replaced atomically so a call running meanwhile finds the old script
        or the new one."""
        exports = [f"export {k}={shlex.quote(v)}" for k, v in self._env.items()]
        command = f'exec {shlex.quote(sys.executable)} {shlex.quote(__file__)} "$@"'
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text("\n".join(["#!/bin/sh", *exports, command, ""]))
        temporary.chmod(0o755)
        os.replace(temporary, self.path)

    def _write(self) -> None:
        """Atomic replace: a concurrent npu-smi call reads the old or the new manifest.
        Written as JSON (which is YAML): the fake reads it without importing PyYAML."""
        temporary = self.manifest_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.manifest, indent=1))
        os.replace(temporary, self.manifest_path)


def make_dev_root(directory: Path, physical_ids: Iterable[int]) -> Path:
    """A /dev stand-in with davinci<N> for each id, plus the management nodes."""
    directory.mkdir(parents=True, exist_ok=True)
    chips = [f"davinci{n}" for n in physical_ids]
    for name in ["davinci_manager", "devmm_svm", "hisi_hdc", *chips]:
        (directory / name).touch()
    return directory


def make_sysfs(
    directory: Path,
    *,
    nodes: int = 8,
    cpus_per_node: int = 24,
    pci_numa: Mapping[str, int] | None = None,
) -> Path:
    """A /sys stand-in: NUMA nodes of consecutive CPUs (a 192-core Kunpeng host by default) and
    optionally PCI devices with their `numa_node` files, each under the root complex of its own
    domain and bus (`devices/pci<domain>:<bus>/<bus id>`), `bus/pci/devices/<bus id>` linking
    there as in the kernel's sysfs."""
    for node in range(nodes):
        node_dir = directory / "devices" / "system" / "node" / f"node{node}"
        node_dir.mkdir(parents=True, exist_ok=True)
        first = node * cpus_per_node
        (node_dir / "cpulist").write_text(f"{first}-{first + cpus_per_node - 1}\n")
    for bus_id, node in (pci_numa or {}).items():
        bdf = bus_id.lower()
        device = directory / "devices" / f"pci{bdf[:7]}" / bdf
        device.mkdir(parents=True, exist_ok=True)
        (device / "numa_node").write_text(f"{node}\n")
        link = directory / "bus" / "pci" / "devices" / bdf
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(Path("../../..") / "devices" / f"pci{bdf[:7]}" / bdf)
    return directory


def answer_or_replay(args: Sequence[str]) -> int:
    """The launcher's entry once a fault is set: a call matching a fault gets it (and is logged,
    as the replay logs its calls); any other call is the replay's."""
    from npu_dra.adapters.hardware.npu_smi import replay

    manifest = replay.load_manifest(Path(os.environ["FAKE_NPU_SMI_MANIFEST"]).read_text())
    fault = next(
        (f for f in manifest.get("faults", []) if list(args[: len(f["args"])]) == f["args"]),
        None,
    )
    if fault is None:
        status = replay.main(list(args))
        if status == 0 and (dev_root := os.environ.get(VNPU_DEV_ENV)):
            vnpu_node_follows(Path(dev_root), args)
        return status
    if log := os.environ.get("FAKE_NPU_SMI_LOG"):
        with open(log, "a", encoding="utf-8") as file:
            file.write(" ".join(args) + "\n")
    time.sleep(float(fault["delay"]))
    sys.stdout.write(str(fault["stdout"]))
    sys.stderr.write(str(fault["stderr"]))
    return int(fault["exit"])


def vnpu_node_follows(dev_root: Path, args: Sequence[str]) -> None:
    """After a vNPU command succeeded: its node made (create) or removed (destroy)."""
    options = dict(zip(args[3::2], args[4::2], strict=False))
    if list(args[:3]) not in (CREATE_VNPU, DESTROY_VNPU) or "-v" not in options:
        return
    node = dev_root / f"vdavinci{int(options['-v'])}"
    node.unlink(missing_ok=True)
    if list(args[:3]) == CREATE_VNPU:
        os.mknod(node, 0o660 | stat.S_IFCHR, os.makedev(VNPU_MAJOR, int(options["-v"])))
        node.chmod(0o660)  # mknod honours the umask


if __name__ == "__main__":
    sys.exit(answer_or_replay(sys.argv[1:]))
