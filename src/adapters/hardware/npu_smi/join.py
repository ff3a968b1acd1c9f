"""Combines the parsed npu-smi replies into devices, refusing any reply that contradicts another.

`npu-smi info -m` and `npu-smi info` must list the same chips: a chip in one but not the other
means a truncated or inconsistent reply, and discovery fails rather than publish a shorter list.

Physical id (the N of /dev/davinciN, which names the device `npu-N`), in order of preference:
 1. the Phy-ID printed by npu-smi (A3 table and `-m`, 950 `-m`);
 2. else, when /dev holds exactly one davinci node per chip, the k-th lowest node number
    belongs to the chip with the k-th lowest logic id (`ls /dev/davinci*`, ascend-facts A.1);
 3. else the logic id, which equals the physical id on every 910A/910B/310P sample; a chip
    whose node is then missing is published UNHEALTHY.
Logic id: from `-m`, else the 310-family `Device` column, else (950) the physical id.
"""

import logging
from collections.abc import Callable, Collection, Mapping

import attrs

from npu_dra.adapters.hardware.chips import CHIPS
from npu_dra.adapters.hardware.npu_smi.info_rows import COMMAND as INFO_COMMAND
from npu_dra.adapters.hardware.npu_smi.info_rows import InfoChip
from npu_dra.adapters.hardware.npu_smi.lines import bad_line
from npu_dra.adapters.hardware.npu_smi.parse_map import MAP_COMMAND, MappedChip
from npu_dra.adapters.hardware.npu_smi.parse_topo import COMMAND as TOPO_COMMAND
from npu_dra.adapters.hardware.npu_smi.parse_topo import Topology, topology_groups
from npu_dra.domain.device import Device, Health
from npu_dra.domain.ids import DeviceName

log = logging.getLogger(__name__)
ChipKey = tuple[int, int]  # (NPU id, chip index)
NumaLookup = Callable[[str | None, frozenset[int] | None], int | None]
MIB = 2**20
# chipName is published as a device attribute: resource.k8s.io/v1 bounds a string attribute
# at 64 characters (DeviceAttributeMaxValueLength), so a longer name would fail every publish.
MAX_CHIP_NAME = 64


@attrs.frozen
class Ids:
    logic: int
    physical: int


def chip_ids(
    info: tuple[InfoChip, ...], mapping: tuple[MappedChip, ...], dev_nodes: Collection[int]
) -> dict[ChipKey, Ids]:
    """Logic and physical id of every chip, after checking `info` and `-m` agree."""
    mapped = _matched(info, mapping)
    explicit = {key: _explicit_physical(chip, mapped[key]) for key, chip in _keyed(info)}
    logic = {key: _logic(chip, mapped[key], explicit[key]) for key, chip in _keyed(info)}
    inferred = _by_dev_nodes(logic, dev_nodes) if None in explicit.values() else {}
    return {key: Ids(logic[key], _physical(explicit[key], inferred, key, logic)) for key in logic}


@attrs.frozen
class Context:
    """What every chip's device is built against: the node-wide replies and lookups."""

    topology: Topology | None
    groups: Mapping[int, str]
    memory: Mapping[ChipKey, int]
    dev_nodes: Collection[int]
    numa: NumaLookup


def devices(
    info: tuple[InfoChip, ...],
    ids: Mapping[ChipKey, Ids],
    *,
    topology: Topology | None,
    memory: Mapping[ChipKey, int],
    dev_nodes: Collection[int],
    numa: NumaLookup,
) -> tuple[Device, ...]:
    groups = topology_groups(topology) if topology else {}
    context = Context(topology, groups, memory, dev_nodes, numa)
    built = [_device(chip, ids[key], key, context) for key, chip in _keyed(info)]
    return tuple(sorted(built, key=lambda d: d.physical_id))


def _device(chip: InfoChip, ids: Ids, key: ChipKey, context: Context) -> Device:
    topology = context.topology
    topo_id = ids.physical if topology and topology.by == "physical" else ids.logic
    if topology is not None and topo_id not in topology.links:
        raise bad_line(INFO_COMMAND, chip.line, f"chip missing from `{TOPO_COMMAND}`")
    memory_mib = chip.memory_mib or context.memory.get(key)
    if memory_mib is None:
        raise bad_line(INFO_COMMAND, chip.line, "no memory size in any npu-smi reply")
    if len(chip.name) > MAX_CHIP_NAME:
        raise bad_line(INFO_COMMAND, chip.line, f"chip name longer than {MAX_CHIP_NAME} characters")
    facts = CHIPS.get(chip.name)
    return Device(
        name=DeviceName(f"npu-{ids.physical}"),
        physical_id=ids.physical,
        logic_id=ids.logic,
        card_id=chip.card_id,
        chip_id=chip.chip_index,
        chip_name=chip.name,
        memory_bytes=memory_mib * MIB,
        health=_health(chip, ids.physical, context.dev_nodes),
        numa_node=context.numa(chip.bus_id, topology.affinity.get(topo_id) if topology else None),
        topology_group=context.groups.get(topo_id),
        pci_bus_id=chip.bus_id,
        aicore_count=facts.aicores if facts else None,
    )


def _keyed(info: tuple[InfoChip, ...]) -> list[tuple[ChipKey, InfoChip]]:
    return [((chip.card_id, chip.chip_index), chip) for chip in info]


def _matched(
    info: tuple[InfoChip, ...], mapping: tuple[MappedChip, ...]
) -> dict[ChipKey, MappedChip]:
    mapped = {(m.card_id, m.chip_id): m for m in mapping}
    for key, chip in _keyed(info):
        if key not in mapped:
            raise bad_line(INFO_COMMAND, chip.line, f"chip not listed by `{MAP_COMMAND}`")
    listed = {key for key, _ in _keyed(info)}
    for key, row in mapped.items():
        if key not in listed:
            raise bad_line(MAP_COMMAND, row.line, f"chip missing from `{INFO_COMMAND}`")
    return mapped


def _explicit_physical(chip: InfoChip, row: MappedChip) -> int | None:
    if None not in (chip.physical_id, row.physical_id) and chip.physical_id != row.physical_id:
        raise bad_line(MAP_COMMAND, row.line, f"Phy-ID differs from `{INFO_COMMAND}`")
    return chip.physical_id if chip.physical_id is not None else row.physical_id


def _logic(chip: InfoChip, row: MappedChip, physical: int | None) -> int:
    if None not in (chip.logic_id, row.logic_id) and chip.logic_id != row.logic_id:
        raise bad_line(MAP_COMMAND, row.line, f"logic id differs from `{INFO_COMMAND}`")
    logic = _first(row.logic_id, chip.logic_id, physical)
    if logic is None:
        raise bad_line(MAP_COMMAND, row.line, "chip has neither a logic id nor a Phy-ID")
    return logic


def _physical(
    explicit: int | None,
    inferred: Mapping[ChipKey, int],
    key: ChipKey,
    logic: Mapping[ChipKey, int],
) -> int:
    return explicit if explicit is not None else inferred.get(key, logic[key])


def _first(*candidates: int | None) -> int | None:
    return next((c for c in candidates if c is not None), None)


def _by_dev_nodes(logic: Mapping[ChipKey, int], dev_nodes: Collection[int]) -> dict[ChipKey, int]:
    if len(dev_nodes) != len(logic):
        return {}
    by_logic = sorted(logic, key=lambda key: logic[key])
    return dict(zip(by_logic, sorted(dev_nodes), strict=True))


def _health(chip: InfoChip, physical: int, dev_nodes: Collection[int]) -> Health:
    if physical in dev_nodes:
        return chip.health
    log.warning("npu-%d: /dev/davinci%d is missing; publishing it Unhealthy", physical, physical)
    return Health.UNHEALTHY
