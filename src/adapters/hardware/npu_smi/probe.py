"""NpuSmiProbe: the HardwareProbe adapter for real Ascend nodes.

One discovery is one concurrent round of three npu-smi calls (`info`, `info -m`,
`info -t topo`), plus one more round, per card, only for chips whose memory `info` does not
show. The whole probe shares one deadline, so a hung npu-smi costs at most `timeout` seconds.
Any failure raises ProbeError; a partial device list is never returned.

Re-probes are cheap: the plugin re-probes every few seconds for health, and a full discovery
costs three npu-smi processes and the parsing of three tables. Within `full_every_s` of the last
full discovery, a re-probe runs `npu-smi info` alone (health, chips, bus ids and memory sizes are
all in it) and looks at /dev and the host's driver files again; if none of that changed, the
last inventory is returned as it is, otherwise a full discovery runs at once. What only `-m`
and `-t topo` show (ids, HCCS links) changes only with the hardware or driver, which shows in
`info` or /dev too, and is read again by the full discovery every `full_every_s` anyway. Health
is therefore seen as fast as before, at one npu-smi call per re-probe.

A chip whose health word is not OK costs one more call per probe, for its error codes
(error_codes.py): the fault-code table (Huawei's, or `--fault-codes`) turns them into its health,
so codes that change under the same word are seen at the next re-probe too.
"""

import time
from pathlib import Path

import attrs

from npu_dra.adapters.hardware.ascend_host import (
    DEFAULT_ASCEND_ROOT,
    DEFAULT_DCMI_DIR,
    DEFAULT_INSTALL_INFO,
    AscendHostPaths,
)
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.error_codes import ErrorCodeReader
from npu_dra.adapters.hardware.npu_smi.hccn import HCCN_TOOL, HccnAddresses
from npu_dra.adapters.hardware.npu_smi.info_rows import InfoChip
from npu_dra.adapters.hardware.npu_smi.join import ChipKey, chip_ids, devices
from npu_dra.adapters.hardware.npu_smi.parse_info import parse_info
from npu_dra.adapters.hardware.npu_smi.parse_map import parse_map
from npu_dra.adapters.hardware.npu_smi.parse_memory import parse_memory
from npu_dra.adapters.hardware.npu_smi.parse_topo import parse_topo
from npu_dra.adapters.hardware.npu_smi.runner import (
    Command,
    CommandDone,
    NpuSmiRunner,
    describe,
)
from npu_dra.adapters.hardware.npu_smi.sysfs import NumaMap, with_pcie_roots
from npu_dra.domain.device import Device, Health, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.fault_codes import FaultCodeTable, built_in_table
from npu_dra.domain.ids import NodeName

INFO: Command = ("info",)
MAP: Command = ("info", "-m")
TOPO: Command = ("info", "-t", "topo")
MEMORY_QUERIES = ("memory", "usages")  # tried in this order for chips `info` gives no size
FULL_EVERY_S = 300.0


@attrs.frozen
class _Seen:
    """What a full discovery found, and what a cheap re-probe compares to decide it still holds."""

    inventory: NodeInventory
    chips: tuple[tuple[object, ...], ...]
    dev_nodes: frozenset[int]
    host: object
    at: float
    info_text: str = ""  # `npu-smi info` as read then: the same text needs no parsing
    unclassified: tuple[Device, ...] = ()  # health from the words alone, before the codes


class NpuSmiProbe:
    """Discovers this node's Ascend chips with npu-smi, sysfs and /dev, and which shared device
    nodes and driver files the host has (the CDI content's host side)."""

    def __init__(
        self,
        *,
        node: NodeName,
        npu_smi: Path = Path("/usr/local/bin/npu-smi"),
        sysfs_root: Path = Path("/sys"),
        dev_root: Path = Path("/dev"),
        timeout: float = 10.0,
        ascend_root: Path = DEFAULT_ASCEND_ROOT,
        dcmi_dir: Path = DEFAULT_DCMI_DIR,
        install_info: Path = DEFAULT_INSTALL_INFO,
        full_every_s: float = FULL_EVERY_S,
        on_command: CommandDone | None = None,
        fault_table: FaultCodeTable | None = None,
    ) -> None:
        self._node = node
        self._runner = NpuSmiRunner(path=npu_smi, on_done=on_command)
        self._sysfs_root = sysfs_root
        self._dev_root = dev_root
        self._timeout = timeout
        self._host = AscendHostPaths(dev_root, npu_smi, ascend_root, dcmi_dir, install_info)
        self._full_every = full_every_s
        self._seen: _Seen | None = None
        self._error_codes = ErrorCodeReader(fault_table or built_in_table())
        self._addresses = HccnAddresses(ascend_root / HCCN_TOOL)  # device IPs, where it is

    def probe(self) -> NodeInventory:
        seen = self._seen
        if seen is not None and time.monotonic() - seen.at < self._full_every:
            deadline = time.monotonic() + self._timeout
            text = self._runner.run(INFO, timeout=self._timeout)
            unchanged = (
                (text == seen.info_text or _chips(parse_info(text).chips) == seen.chips)
                and self._dev_nodes() == seen.dev_nodes
                and self._host.host_files() == seen.host
            )
            if unchanged:
                return self._codes_again(seen, deadline)
        self._seen = None
        return self._discover()

    def _codes_again(self, seen: _Seen, deadline: float) -> NodeInventory:
        """The same chips and words: the faulted chips' codes are read again (they may change
        under the same word), one call each, within the re-probe's deadline; healthy nodes cost
        nothing more."""
        if all(d.health is Health.HEALTHY for d in seen.unclassified):
            return seen.inventory
        devices = self._error_codes.classified(
            seen.unclassified,
            lambda command: self._runner.run(command, timeout=_left(deadline)),
            with_node=seen.dev_nodes,
        )
        if devices == seen.inventory.devices:
            return seen.inventory
        self._seen = attrs.evolve(seen, inventory=attrs.evolve(seen.inventory, devices=devices))
        return self._seen.inventory

    def _discover(self) -> NodeInventory:
        began = time.monotonic()
        deadline = began + self._timeout
        info_text, map_text, topo_text = self._runner.run_all(
            (INFO, MAP, TOPO), timeout=self._timeout
        )
        info = parse_info(info_text)
        host = self._host.host_files()
        if not info.chips:
            return NodeInventory(self._node, (), host)
        mapping, topology = parse_map(map_text), parse_topo(topo_text)
        dev_nodes = self._dev_nodes()
        ids = chip_ids(info.chips, mapping, dev_nodes)
        numa = NumaMap(self._sysfs_root)
        found = devices(
            info.chips,
            ids,
            topology=topology,
            memory=self._missing_memory(info.chips, deadline),
            dev_nodes=dev_nodes,
            numa=lambda bus_id, cpus: numa.node_of(bus_id=bus_id, cpus=cpus),
        )
        found = with_pcie_roots(found, self._sysfs_root)
        unclassified = found = self._addresses.with_addresses(found, deadline)
        found = self._error_codes.classified(
            found,
            lambda command: self._runner.run(command, timeout=_left(deadline)),
            with_node=dev_nodes,
        )
        try:
            inventory = NodeInventory(self._node, found, host)
        except DomainError as error:
            raise ProbeError(f"npu-smi replies describe an impossible node: {error}") from error
        chips = _chips(info.chips)
        self._seen = _Seen(inventory, chips, dev_nodes, host, began, info_text, unclassified)
        return inventory

    def _missing_memory(self, chips: tuple[InfoChip, ...], deadline: float) -> dict[ChipKey, int]:
        """Sizes from `-t memory -i N` (then `-t usages -i N`) for chips `info` left without."""
        sizes: dict[ChipKey, int] = {}
        for query in MEMORY_QUERIES:
            missing = [
                c for c in chips if not c.memory_mib and (c.card_id, c.chip_index) not in sizes
            ]
            cards = sorted({chip.card_id for chip in missing})
            commands = [("info", "-t", query, "-i", str(card)) for card in cards]
            remaining = deadline - time.monotonic()
            replies = self._runner.run_all(commands, timeout=remaining)
            for card, command, reply in zip(cards, commands, replies, strict=True):
                found = parse_memory(reply, command=describe(command))
                sizes.update({(card, chip): mib for chip, mib in found.items()})
        return sizes

    def _dev_nodes(self) -> frozenset[int]:
        """N of every /dev/davinciN (davinci_manager and friends are not chips)."""
        try:
            names = [path.name.removeprefix("davinci") for path in self._dev_root.glob("davinci*")]
        except OSError as error:
            raise ProbeError(f"{self._dev_root}: {error}") from error
        return frozenset(int(n) for n in names if n.isascii() and n.isdigit())


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.001)


def _chips(chips: tuple[InfoChip, ...]) -> tuple[tuple[object, ...], ...]:
    """What `info` says of each chip, without the row's text (usage and power figures move)."""
    return tuple(attrs.astuple(c, recurse=False, filter=_not_the_line) for c in chips)


def _not_the_line(attribute: "attrs.Attribute[object]", _: object) -> bool:
    return attribute.name != "line"
