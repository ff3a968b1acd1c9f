"""The hardware contract run over every HardwareProbe adapter: FakeHardware from node
descriptions, NpuSmiProbe over every recorded `npu-smi info` (through the fake npu-smi), and
NvmlProbe over the fake NVML (recorded `nvidia-smi -q -x` of real GPUs, and described nodes).
At the end, the chips' container-sharing mode (SharingMode) over its four adapters.

With `--hardware-backend=MODULE:FACTORY` the contract class runs against that backend only.
"""

import functools
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from npu_dra.adapters.hardware.dcmi.sharing_mode import DcmiSharingMode
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from npu_dra.adapters.hardware.npu_smi.sharing_mode import NpuSmiSharingMode
from npu_dra.adapters.hardware.nvml.fake import fake_gpu_node
from npu_dra.adapters.hardware.nvml.library import NvmlError
from npu_dra.adapters.hardware.nvml.sharing_mode import TimeSlicedGpus
from npu_dra.adapters.hardware.nvml.smi_xml import FakeNvml
from npu_dra.contract import HardwareBackend, HardwareContract, load_backend
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DeviceName, NodeName
from npu_dra.domain.ports import HardwareProbe, SharingMode
from tests.support.dcmi_stub import dcmi_backend
from tests.support.fake_npu_smi import (
    FIXTURES,
    INFO,
    MAP,
    TOPO,
    FakeNpuSmi,
    load_scenario,
    make_dev_root,
    make_sysfs,
    scenario_names,
)

NODE = NodeName("node-a")
FAKE_DESCRIPTIONS: dict[str, dict[str, Any]] = {
    "910B4-mesh": {"chip": "910B4", "count": 8, "numaNodes": [6, 6, 4, 4, 0, 0, 2, 2]},
    "910A-rings": {"chip": "910A", "count": 8, "topology": "rings", "health": {3: "Warning"}},
    "310P3-degraded": {"chip": "310P3", "count": 4, "topology": "none", "health": {1: "Alarm"}},
}
REJECTED_SCENARIOS = {  # documentation captures with elisions: the line npu-smi never prints
    "910B1_8npu_elided": "'...'",
    "910A_8npu_idle_elided": "'/usr/local/bin/npu-smi info'",
}
HEALTH_WORDS = ("OK", "Warning", "Alarm", "Critical", "UNKNOWN")
NVML_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvml"
NVML_NODES: dict[str, dict[str, Any]] = {
    "H100-recorded": {
        "nvidiaSmiXml": str(NVML_FIXTURES / "nvidia-smi-q-x_H100.xml"),
        "nvmlDump": str(NVML_FIXTURES / "nvml-dump_H100.json"),
    },
    "H100-recorded-xml-only": {"nvidiaSmiXml": str(NVML_FIXTURES / "nvidia-smi-q-x_H100.xml")},
    "A100-x8-described": {
        "gpu": "NVIDIA A100-SXM4-80GB",
        "count": 8,
        "numaNodes": [0] * 4 + [1] * 4,
    },
}
DCMI_SCENARIOS = (  # the stand-in libdcmi.so serving recorded hosts of every chip family
    "910B4_8npu",
    "910A_8npu_busy",
    "Ascend910-A3_16npu",
    "310P3_300IDuo_3cards",
    "310B4_Atlas200IDKA2",
    "no-card",
)
BUILT_IN = (
    [f"fake:{name}" for name in FAKE_DESCRIPTIONS]
    + [f"npu-smi:{name}" for name in scenario_names() if name not in REJECTED_SCENARIOS]
    + [f"nvml:{name}" for name in NVML_NODES]
    + [f"dcmi:{name}" for name in DCMI_SCENARIOS]
)


# Built-in backends a check cannot apply to are not generated at all (rather than skipped):
# a description file cannot hang, and "no card" has no output to mangle.
NOT_APPLICABLE: dict[str, Callable[[str], bool]] = {
    "test_hanging_hardware_raises_probe_error_within_timeout": lambda s: (
        s.startswith(("fake:", "nvml:"))  # NVML calls do not hang; nvmlInit fails or answers
        or s == "dcmi:no-card"  # no chips: DCMI's one slow call, npu-smi's topo, is never made
    ),
    "test_malformed_output_is_an_error_never_a_shorter_list": lambda s: (
        s in ("npu-smi:no-card", "dcmi:no-card")
    ),
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hardware_backend_spec" in metafunc.fixturenames:
        specs = metafunc.config.getoption("hardware_backend") or BUILT_IN
        excluded = NOT_APPLICABLE.get(metafunc.function.__name__, lambda _: False)
        metafunc.parametrize("hardware_backend_spec", [s for s in specs if not excluded(s)])


@pytest.fixture
def hardware_backend(hardware_backend_spec: str, tmp_path: Path) -> HardwareBackend:
    if hardware_backend_spec not in BUILT_IN:
        return load_backend(hardware_backend_spec)
    kind, _, name = hardware_backend_spec.partition(":")
    make = {
        "fake": fake_backend,
        "npu-smi": npu_smi_backend,
        "nvml": nvml_backend,
        "dcmi": dcmi_backend,
    }[kind]
    return make(name, tmp_path)


class TestHardwareContract(HardwareContract):
    pass


def fake_backend(name: str, tmp_path: Path) -> HardwareBackend:
    description = FAKE_DESCRIPTIONS[name]
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("chip: [910B4\ncount: 8\n")
    return HardwareBackend(
        f"fake:{name}",
        healthy=lambda: FakeHardware(description, node=NODE),
        failing=[lambda: FakeHardware(tmp_path / "missing.yaml", node=NODE)],
        malformed=[
            lambda: FakeHardware({**description, "numaNodes": [0, 1]}, node=NODE),
            lambda: FakeHardware({**description, "health": {0: "Broken"}}, node=NODE),
            lambda: FakeHardware(garbage, node=NODE),
        ],
    )


def nvml_backend(name: str, tmp_path: Path) -> HardwareBackend:
    description = NVML_NODES[name]

    def broken(**settings: Any) -> HardwareProbe:
        probe = fake_gpu_node(description, node=NODE)
        library = probe._library
        assert isinstance(library, FakeNvml)
        for key, value in settings.items():
            setattr(library, key, value)
        return probe

    truncated = tmp_path / "truncated.xml"
    text = (NVML_FIXTURES / "nvidia-smi-q-x_H100.xml").read_text()
    truncated.write_text(text[: len(text) // 2])
    no_uuid = tmp_path / "no-uuid.xml"
    no_uuid.write_text(re.sub(r"<uuid>[^<]*</uuid>", "<uuid>N/A</uuid>", text))
    return HardwareBackend(
        f"nvml:{name}",
        healthy=lambda: fake_gpu_node(description, node=NODE),
        failing=[lambda: broken(fail_with=NvmlError("nvmlInit: Driver Not Loaded"))],
        malformed=[
            lambda: broken(broken_gpu=0),
            lambda: fake_gpu_node({"nvidiaSmiXml": str(truncated)}, node=NODE),
            lambda: fake_gpu_node({"nvidiaSmiXml": str(no_uuid)}, node=NODE),
        ],
    )


def npu_smi_backend(name: str, tmp_path: Path) -> HardwareBackend:
    manifest = load_scenario(name)
    dev_root = make_dev_root(tmp_path / "dev", range(manifest["davinci_count"]))
    sysfs = make_sysfs(tmp_path / "sys")

    fakes: dict[str, FakeNpuSmi] = {}

    def probe(variant: str, timeout: float = 10.0, **answers: Any) -> HardwareProbe:
        """NpuSmiProbe over the scenario with `answers` ({"info_-m": {...}}) changed."""
        if variant not in fakes:
            fakes[variant] = FakeNpuSmi(tmp_path / variant, manifest)
            for args, answer in answers.items():
                fakes[variant].set_answer(args.split("_"), **answer)
        path = fakes[variant].path
        return NpuSmiProbe(
            node=NODE, npu_smi=path, sysfs_root=sysfs, dev_root=dev_root, timeout=timeout
        )

    return HardwareBackend(
        f"npu-smi:{name}",
        healthy=lambda: probe("healthy"),
        failing=[
            lambda: probe("exit", info={"exit": 1, "stdout": "", "stderr": "dcmi init failed\n"}),
            lambda: NpuSmiProbe(node=NODE, npu_smi=tmp_path / "absent", dev_root=dev_root),
        ],
        hanging=lambda timeout: probe("hang", timeout, info={"delay": 60}),
        malformed=_malformed(manifest, probe) if manifest["davinci_count"] else [],
    )


def _malformed(
    manifest: Mapping[str, Any], probe: Callable[..., HardwareProbe]
) -> list[Callable[[], HardwareProbe]]:
    info, mapping = (_output(manifest, args) for args in (INFO, MAP))
    lines = info.splitlines()
    first, last = _chip_rows(lines)[0], _chip_rows(lines)[-1]
    extra = _extra_map_row(mapping)
    first_chip = "\n".join(lines[first : first + 2])  # its two rows, repeated right after them
    variants: dict[str, dict[str, Any]] = {
        "truncated": {"info": {"truncate": last}},
        "garbage": {"info": {"garbage": "%$# garbage #$%"}},
        "duplicate": {"info": {"garbage": first_chip, "garbage_after": first + 2}},
        "empty": {"info": {"stdout": ""}},
        "unlisted": {"info_-m": {"garbage": extra, "garbage_after": len(mapping.splitlines())}},
    }
    if "does not support" not in _output(manifest, TOPO):
        variants["topo-garbage"] = {"info_-t_topo": {"garbage": "NPU0 X BOGUS", "garbage_after": 1}}
    return [functools.partial(probe, variant, **answers) for variant, answers in variants.items()]


def _output(manifest: Mapping[str, Any], args: tuple[str, ...]) -> str:
    entry = next(e for e in manifest["commands"] if tuple(e["args"]) == args)
    return recorded(Path(entry["file"])) if "file" in entry else str(entry["stdout"])


def _chip_rows(lines: list[str]) -> list[int]:
    """Indexes of every chip's first row: the rows with a health word in a cell."""
    return [
        index
        for index, line in enumerate(lines)
        if any(cell.strip() in HEALTH_WORDS for cell in line.split("|")[2:4])
    ]


def _extra_map_row(mapping: str) -> str:
    """A `-m` row for a chip no other reply knows: NPU 4242, chip 0, unique ids."""
    header = next(line for line in mapping.splitlines() if "NPU ID" in line)
    columns = re.split(r"\s{2,}", header.strip())
    values = ["0" if column == "Chip ID" else "4242" for column in columns[:-1]]
    return "\t" + "    ".join([*values, "Ascend 910B4"])


@pytest.mark.parametrize("name", sorted(REJECTED_SCENARIOS))
def test_elided_documentation_captures_are_rejected_naming_the_line(
    name: str, tmp_path: Path
) -> None:
    fake = FakeNpuSmi.from_scenario(name, tmp_path)
    probe = NpuSmiProbe(node=NODE, npu_smi=fake.path, dev_root=make_dev_root(tmp_path, range(8)))
    with pytest.raises(ProbeError, match=re.escape(REJECTED_SCENARIOS[name])) as raised:
        probe.probe()
    assert "`npu-smi info` line" in str(raised.value)


def test_every_recorded_npu_smi_info_has_a_scenario() -> None:
    infos = {
        Path(entry["file"]).name
        for name in scenario_names()
        for entry in load_scenario(name)["commands"]
        if entry["args"] == ["info"] and "file" in entry
    }
    recordings = {path.name for path in FIXTURES.glob("npu-smi-info_*.txt")}
    assert recordings
    assert recordings <= infos


def test_no_npu_card_is_zero_devices_not_an_error(tmp_path: Path) -> None:
    fake = FakeNpuSmi.from_scenario("no-card", tmp_path)
    fake.set_answer(INFO, exit=1)
    inventory = NpuSmiProbe(node=NODE, npu_smi=fake.path, dev_root=tmp_path).probe()
    assert inventory.devices == ()


def test_scenario_manifests_are_valid_yaml_with_three_commands() -> None:
    for name in scenario_names():
        manifest = yaml.safe_load((FIXTURES / "scenarios" / f"{name}.yaml").read_text())
        assert {tuple(e["args"]) for e in manifest["commands"]} == {INFO, MAP, TOPO}


class _Answers:
    """A HardwareProbe that answers `inventory`, or raises `error`: a backend that breaks a rule."""

    def __init__(self, inventory: NodeInventory | None = None, error: Exception | None = None):
        self._inventory, self._error = inventory, error

    def probe(self) -> NodeInventory:
        if self._error is not None:
            raise self._error
        assert self._inventory is not None
        return self._inventory


def _recorded_h100() -> NodeInventory:
    return fake_gpu_node(NVML_NODES["H100-recorded"], node=NODE).probe()


def _misnamed() -> NodeInventory:
    inventory = _recorded_h100()
    renamed = attrs.evolve(inventory.devices[0], name=DeviceName("npu-0"))
    return attrs.evolve(inventory, devices=(renamed,))


@pytest.mark.parametrize(
    ("test", "backend", "says"),
    [
        (
            "test_device_names_are_dns_labels_named_by_their_profile",
            HardwareBackend("misnamed", healthy=lambda: _Answers(_misnamed())),
            "devices are named as the 'gpu' profile says: 'npu-0', expected 'gpu-0'",
        ),
        (
            "test_probe_returns_an_inventory",
            HardwareBackend("refuses", healthy=lambda: _Answers(error=ProbeError("no driver"))),
            "a working backend's probe() answers without error: ProbeError: no driver",
        ),
        (
            "test_failing_hardware_raises_probe_error",
            HardwareBackend(
                "leaks",
                healthy=lambda: _Answers(_recorded_h100()),
                failing=[lambda: _Answers(error=NvmlError("nvmlInit: Driver Not Loaded"))],
            ),
            "failing hardware raises ProbeError: variant 0 raised NvmlError",
        ),
        (
            "test_malformed_output_is_an_error_never_a_shorter_list",
            HardwareBackend(
                "shortens",
                healthy=lambda: _Answers(_recorded_h100()),
                malformed=[lambda: _Answers(attrs.evolve(_recorded_h100(), devices=()))],
            ),
            "never a shorter list: variant 0 gave an inventory of 0 devices",
        ),
    ],
)
def test_a_broken_rule_fails_naming_the_rule(
    test: str, backend: HardwareBackend, says: str
) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        getattr(HardwareContract(), test)(backend)
    assert str(failed.value).startswith("hardware contract rule broken: ")
    assert says in str(failed.value)


# -- the chips' container-sharing mode (SharingMode, #31) over every adapter ---------------


@attrs.frozen
class ShareBackend:
    """`mode()`: a fresh node whose chips are all out of sharing mode; `chips`: two of its chips
    that have the mode; `without()`: a node and a chip of it without the mode; `broken()`: a node
    whose tool fails (the error must name the chip)."""

    mode: Callable[[], SharingMode]
    chips: tuple[Device, Device]
    needs_mode: bool = True  # False: the hardware shares without one (GPUs)
    without: Callable[[], tuple[SharingMode, Device]] | None = None
    broken: list[Callable[[], SharingMode]] = attrs.field(factory=list)


def _chip(card: int, chip_name: str = "910B4", chip: int = 0) -> Device:
    return Device(DeviceName(f"npu-{card}"), card, card, card, chip, chip_name, 32 * 2**30)


def _npu_smi_share(tmp_path: Path, **manifest: Any) -> tuple[FakeNpuSmi, SharingMode]:
    directory = tmp_path / f"npu-smi-{len(list(tmp_path.glob('npu-smi-*')))}"
    fake = FakeNpuSmi(directory, {**load_scenario("910B4_8npu"), **manifest})
    return fake, NpuSmiSharingMode(npu_smi=fake.path, timeout=2.0)


def _faulty_npu_smi(tmp_path: Path, prefix: list[str], **fault: Any) -> SharingMode:
    fake, mode = _npu_smi_share(tmp_path)
    fake.set_fault(prefix, **fault)
    return mode


class _DcmiShareCalls:
    """libdcmi.so's two device-share calls as the library answers them (Huawei's DCMI API
    reference, dcmi_get|set_device_share_enable): 1 on, 0 off; -8255 for a chip without."""

    def __init__(self, without: frozenset[int] = frozenset()) -> None:
        self.on: set[tuple[int, int]] = set()
        self._without = without

    def dcmi_get_device_share_enable(self, card: int, chip: int, flag: Any) -> int:
        if card in self._without:
            return -8255
        flag._obj.value = int((card, chip) in self.on)
        return 0

    def dcmi_set_device_share_enable(self, card: int, chip: int, value: int) -> int:
        if card in self._without:
            return -8255
        (self.on.add if value else self.on.discard)((card, chip))
        return 0


def _dcmi_share(without: frozenset[int] = frozenset()) -> SharingMode:
    return DcmiSharingMode(dcmi=_DcmiShareCalls(without))  # type: ignore[arg-type]


def share_backends(tmp_path: Path) -> dict[str, ShareBackend]:
    gpus = tuple(fake_gpu_node(NVML_NODES["A100-x8-described"], node=NODE).probe().devices[:2])
    return {
        "fake": ShareBackend(
            lambda: FakeHardware({"chip": "310P3", "count": 2}, node=NODE).device_share(),
            (_chip(0, "310P3"), _chip(1, "310P3")),
            without=lambda: (
                FakeHardware({"chip": "910A", "count": 1}, node=NODE).device_share(),
                _chip(0, "910A"),
            ),
        ),
        "npu-smi": ShareBackend(
            lambda: _npu_smi_share(tmp_path)[1],
            (_chip(0), _chip(3)),
            without=lambda: (_npu_smi_share(tmp_path, device_share=False)[1], _chip(0, "910A")),
            broken=[
                lambda: _faulty_npu_smi(
                    tmp_path,
                    ["set", "-t", "device-share"],
                    exit=215,
                    stdout="\tStatus                         : Fail\n\tMessage : Failed to set\n",
                ),
                lambda: _faulty_npu_smi(tmp_path, ["info", "-t", "device-share"], delay=60),
                lambda: _faulty_npu_smi(tmp_path, ["info", "-t", "device-share"], stdout="?\n"),
            ],
        ),
        "dcmi": ShareBackend(
            _dcmi_share,
            (_chip(0), _chip(1)),
            without=lambda: (_dcmi_share(frozenset({0})), _chip(0, "910A")),
        ),
        "nvml": ShareBackend(TimeSlicedGpus, (gpus[0], gpus[1]), needs_mode=False),
    }


SHARE_BACKENDS = ("fake", "npu-smi", "dcmi", "nvml")


@pytest.mark.parametrize("name", SHARE_BACKENDS)
def test_device_share_turns_each_chip_on_once(name: str, tmp_path: Path) -> None:
    backend = share_backends(tmp_path)[name]
    mode = backend.mode()
    first = [mode.enable_device_share(device=chip) for chip in backend.chips]
    again = [mode.enable_device_share(device=chip) for chip in backend.chips]
    assert first == [backend.needs_mode] * 2, "each chip is turned on by its first call"
    assert again == [False, False], "a chip already on is left as it is"


@pytest.mark.parametrize("name", ["fake", "npu-smi", "dcmi"])
def test_device_share_of_a_chip_without_the_mode_names_the_chip_and_its_family(
    name: str, tmp_path: Path
) -> None:
    without = share_backends(tmp_path)[name].without
    assert without is not None
    mode, chip = without()
    with pytest.raises(DomainError) as raised:
        mode.enable_device_share(device=chip)
    assert f"{chip.name} (910A, Ascend910 family) has no container-sharing mode" in str(
        raised.value
    )


@pytest.mark.parametrize("variant", range(3))
def test_npu_smi_device_share_failures_name_the_chip_and_the_command(
    variant: int, tmp_path: Path
) -> None:
    mode = share_backends(tmp_path)["npu-smi"].broken[variant]()
    with pytest.raises(ProbeError) as raised:
        mode.enable_device_share(device=_chip(5))
    said = str(raised.value)
    assert said.startswith("npu-5: ")
    assert "`npu-smi " in said
    assert "-t device-share -i 5 -c 0" in said


def test_npu_smi_device_share_answers_the_prompt_and_asks_only_while_the_mode_is_off(
    tmp_path: Path,
) -> None:
    fake, mode = _npu_smi_share(tmp_path)
    assert mode.enable_device_share(device=_chip(2))  # the replay aborts unless it reads Y
    assert mode.enable_device_share(device=_chip(2)) is False
    assert fake.calls() == [
        "info -t device-share -i 2 -c 0",
        "set -t device-share -i 2 -c 0 -d 1",
        "info -t device-share -i 2 -c 0",
    ]
