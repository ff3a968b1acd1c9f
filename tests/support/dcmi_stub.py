"""The stand-in libdcmi.so as tests drive it: compiled once, fed a host description file.

`build_library()` compiles tests/support/dcmi_stub/dcmi_stub.c with the system `cc` into
~/.cache/npu-dra/dcmi-stub/<source hash>/libdcmi.so (`NPU_DRA_DCMI_STUB_CACHE` overrides).
`StubHost.from_scenario(name, directory)` describes the same host as the recorded npu-smi
scenario: it runs NpuSmiProbe over the fake npu-smi once and writes each chip's ids, name, AI
cores, memory, bus id, health code and CPU affinity in the stub's format. The stub re-reads the
file on every call, so `set_fault(physical, health=2, codes=(...))`, `set_init_rc(-8005)` and
`set_error_count(n)` change what DCMI answers while the code under test runs.

The file is named by the process-wide DCMI_STUB_HOST: every write points it at this host.
"""

import fcntl
import hashlib
import ipaddress
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import attrs

from npu_dra.adapters.hardware.ascend_host import AscendHostPaths
from npu_dra.adapters.hardware.dcmi.library import MAX_ERROR_CODES
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.contract.hardware import HardwareBackend
from npu_dra.domain.device import Device, Health
from npu_dra.domain.ids import NodeName
from npu_dra.domain.vnpu.templates import VnpuOffer
from tests.support.dcmi_stub_vnpu import vnpu_lines
from tests.support.fake_npu_smi import (
    TOPO,
    FakeNpuSmi,
    load_scenario,
    make_dev_root,
    make_sysfs,
)

SOURCE = Path(__file__).resolve().parent / "dcmi_stub"
NODE = NodeName("node-a")
CPUS_PER_NODE = 24  # make_sysfs's default layout
HEALTH_CODES = {
    Health.HEALTHY: 0,
    Health.DEGRADED: 1,
    Health.UNHEALTHY: 2,
    Health.CRITICAL: 3,
    Health.UNKNOWN: 4,
}
HBM_CHIPS = ("910", "Ascend910")  # HBM is read on the 910 family only (dcmi.go DcGetHbmInfo)


def build_library() -> Path:
    """libdcmi.so built from the stub's sources, cached by their hash."""
    sources = sorted(SOURCE.glob("dcmi_stub*.[ch]"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    default = Path.home() / ".cache" / "npu-dra" / "dcmi-stub"
    directory = Path(os.environ.get("NPU_DRA_DCMI_STUB_CACHE", default)) / digest
    library = directory / "libdcmi.so"
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not library.exists():
            ensure_compiler("the DCMI stand-in")
            partial = directory / "libdcmi.so.partial"
            command = ["cc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE"]
            command += ["-Wall", "-Werror", "-pthread", "-shared", "-fPIC", "-o", str(partial)]
            command += [str(path) for path in sources if path.suffix == ".c"]
            subprocess.run(command, check=True, capture_output=True, timeout=120)
            partial.rename(library)
    return library


def ensure_compiler(what: str) -> None:
    """The system C compiler, installed from the distribution's packages when missing (as the
    real node's build script installs its tools), or an error saying what to install."""
    if shutil.which("cc"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError(f"{what} needs a C compiler: install gcc (Debian: gcc libc6-dev)")
    subprocess.run(["apt-get", "update", "-qq"], check=True, timeout=600)
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "gcc", "libc6-dev"]
    subprocess.run(install, check=True, timeout=600)


@attrs.define
class StubChip:
    device: Device
    health: int
    codes: tuple[int, ...] = ()

    def line(self) -> str:
        d = self.device
        if len(d.chip_name.split()) != 1:
            raise ValueError(f"chip name {d.chip_name!r}: the stub's format takes one word")
        hbm = d.memory_bytes >> 20 if d.chip_name.startswith(HBM_CHIPS) else 0
        ddr = 15_000 if hbm else d.memory_bytes >> 20  # a 910's DDR is not its HBM
        bus = _bdf(d.pci_bus_id)
        affinity = _affinity(d.numa_node)
        codes = ",".join(f"{c:08X}" for c in self.codes) or "-"
        return (
            f"chip {d.card_id} {d.chip_id} {d.logic_id} {d.physical_id} {self.health} {ddr} {hbm}"
            f" {d.aicore_count or 0} {bus} {d.chip_name} Ascend {affinity} {codes} 7"
        )

    def network_lines(self) -> list[str]:
        """Its RoCE address and SuperPoD, where the device has them (dcmi_stub_network.c)."""
        d, lines = self.device, []
        if d.device_ip is not None:
            address = ipaddress.IPv4Interface(d.device_ip)
            lines.append(f"device_ip {d.card_id} {d.chip_id} {address.ip} {address.netmask}")
        if d.super_pod_id is not None:
            lines.append(f"spod {d.card_id} {d.chip_id} {d.physical_id} {d.super_pod_id} 0")
        return lines


class StubHost:
    def __init__(
        self,
        path: Path,
        chips: list[StubChip],
        *,
        init_rc: int = 0,
        error_count: int | None = None,
        subscribe_rc: int = 0,
        vnpu: VnpuOffer | None = None,
        call_delay_ms: int = 0,
    ) -> None:
        self.path = path
        self.chips = chips
        self.init_rc = init_rc
        self.error_count = error_count
        self.subscribe_rc = subscribe_rc
        self.vnpu = vnpu  # what the chips may be split into (dcmi_create_vdevice's rules)
        self.call_delay_ms = call_delay_ms  # each vNPU call sleeps this long first
        self.write()

    def variant(self, name: str, **changes: Any) -> "StubHost":
        """A copy of this host beside it (same dev/ and sys/), with `chips`, `init_rc` or
        `error_count` changed; it is the live host from now on."""
        settings = {"chips": list(self.chips), "init_rc": 0, "vnpu": self.vnpu, **changes}
        chips = settings.pop("chips")
        return StubHost(self.directory / f"{name}.txt", chips, **settings)

    @classmethod
    def from_scenario(cls, name: str, directory: Path) -> "StubHost":
        """The scenario's host as npu-smi shows it; `directory` gets dev/, sys/ and host.txt."""
        manifest = load_scenario(name)
        make_dev_root(directory / "dev", range(manifest["davinci_count"]))
        make_sysfs(directory / "sys")
        FakeNpuSmi(directory / "npu-smi", manifest)
        inventory = cls.npu_smi_probe_at(directory, NodeName("n")).probe()
        return cls(directory / "host.txt", [_chip(d) for d in inventory.devices])

    @staticmethod
    def npu_smi_probe_at(directory: Path, node: NodeName) -> NpuSmiProbe:
        npu_smi = directory / "npu-smi" / "npu-smi"
        sysfs, dev = directory / "sys", directory / "dev"
        return NpuSmiProbe(node=node, npu_smi=npu_smi, sysfs_root=sysfs, dev_root=dev)

    def npu_smi_probe(self, node: NodeName) -> NpuSmiProbe:
        """The npu-smi probe of the same host (the recorded scenario)."""
        return self.npu_smi_probe_at(self.directory, node)

    @property
    def directory(self) -> Path:
        return self.path.parent

    def write(self) -> None:
        lines = [f"init_rc {self.init_rc}"]
        lines += [] if self.error_count is None else [f"error_count {self.error_count}"]
        lines += [f"subscribe_rc {self.subscribe_rc}", f"call_delay_ms {self.call_delay_ms}"]
        lines += vnpu_lines(self.vnpu)
        lines += [chip.line() for chip in self.chips]
        lines += [line for chip in self.chips for line in chip.network_lines()]
        partial = self.path.with_suffix(".partial")
        partial.write_text("\n".join(lines) + "\n")
        partial.rename(self.path)  # the stub never reads half a file
        os.environ["DCMI_STUB_HOST"] = str(self.path)

    def set_fault(self, physical: int, *, health: int, codes: tuple[int, ...] = ()) -> None:
        chip = next(c for c in self.chips if c.device.physical_id == physical)
        chip.health, chip.codes = health, codes
        self.write()

    def set_init_rc(self, code: int) -> None:
        self.init_rc = code
        self.write()

    def set_error_count(self, count: int | None) -> None:
        self.error_count = count
        self.write()


def _twin(chip: StubChip) -> StubChip:
    """A chip on another card claiming `chip`'s physical id: DCMI describing an impossible node."""
    return StubChip(attrs.evolve(chip.device, card_id=4242, chip_id=0, logic_id=4242), 0)


def _chip(device: Device) -> StubChip:
    return StubChip(device, HEALTH_CODES[device.health])


def _bdf(bus_id: str | None) -> str:
    if bus_id is None:
        return "0 -1 0 0"
    domain, bus, rest = bus_id.split(":")
    dev, func = rest.split(".")
    return " ".join(str(int(part, 16)) for part in (domain, bus, dev, func))


def _affinity(numa_node: int | None) -> str:
    if numa_node is None:
        return "-"
    first = numa_node * CPUS_PER_NODE
    return f"{first}-{first + CPUS_PER_NODE - 1}"


def dcmi_probe(host: StubHost, *, npu_smi: Path | None = None, timeout: float = 10.0) -> DcmiProbe:
    """DcmiProbe over the stand-in serving `host` (topology from the scenario's fake npu-smi)."""
    return DcmiProbe(
        node=NODE,
        host=AscendHostPaths(dev_root=host.directory / "dev"),
        library_path=build_library(),
        sysfs_root=host.directory / "sys",
        npu_smi=npu_smi or host.directory / "npu-smi" / "npu-smi",
        timeout=timeout,
    )


def dcmi_backend(name: str, tmp_path: Path) -> HardwareBackend:
    """The hardware contract's backend: DcmiProbe over the stand-in serving scenario `name`."""
    host = StubHost.from_scenario(name, tmp_path)
    chips = host.chips
    hanging = FakeNpuSmi(tmp_path / "npu-smi-hang", load_scenario(name))  # only npu-smi can hang
    hanging.set_answer(TOPO, delay=60)
    twin = [*chips, _twin(chips[0])] if chips else []
    return HardwareBackend(
        f"dcmi:{name}",
        healthy=lambda: dcmi_probe(host.variant("healthy")),
        failing=[
            lambda: dcmi_probe(host.variant("init-fails", init_rc=-8005)),
            lambda: DcmiProbe(node=NODE, host=AscendHostPaths(), library_path=tmp_path / "none"),
        ],
        hanging=(lambda t: dcmi_probe(host, npu_smi=hanging.path, timeout=t)) if chips else None,
        malformed=[
            lambda: dcmi_probe(host.variant("error-count", error_count=MAX_ERROR_CODES + 1)),
            lambda: dcmi_probe(host.variant("twin", chips=twin)),
        ]
        if chips
        else [],
    )
