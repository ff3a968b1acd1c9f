"""Each NPU's RoCE address as `hccn_tool` tells it, where the node has the tool: the rank table's
`device_ip` for claim status and metadata (domain/device_facts.py) on nodes probed with npu-smi.

Source: github.com/Ascend/mind-cluster (22bb3d98) component/ascend-faultdiag, which reads
`/usr/local/Ascend/driver/tools/hccn_tool -i <device id> -ip -g` per device and expects
`ipaddr:x.x.x.x` then `netmask:x.x.x.x` (knowledge_graph/parser/npu_info_parser.py
IpInfoParser; root_cluster/rc_parse_job.py maps that device id to the rank table's device_id,
the physical id here). The tool lives under the Ascend driver tree the DaemonSet mounts. A chip
the tool fails for, or answers without an address, has none: the fact is left out; a missing
tool costs nothing.
"""

import logging
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.runner import NpuSmiRunner
from npu_dra.domain.device import Device
from npu_dra.domain.device_facts import interface_address

log = logging.getLogger(__name__)

HCCN_TOOL = Path("driver/tools/hccn_tool")  # under the Ascend root


class HccnAddresses:
    def __init__(self, tool: Path) -> None:
        self._tool = tool
        self._runner = NpuSmiRunner(path=tool)

    def with_addresses(self, devices: Sequence[Device], deadline: float) -> tuple[Device, ...]:
        """`devices` with the address of each the tool tells (one call per chip, concurrently,
        within `deadline`); unchanged where the tool is not there."""
        if not self._tool.is_file():
            return tuple(devices)
        commands = [("-i", str(d.physical_id), "-ip", "-g") for d in devices]
        timeout = max(deadline - time.monotonic(), 0.001)
        try:
            replies = self._runner.run_all(commands, timeout=timeout)
        except ProbeError as error:
            log.debug("%s: no device IPs: %s", self._tool, error)
            return tuple(devices)
        return tuple(
            attrs.evolve(d, device_ip=parse_address(r))
            for d, r in zip(devices, replies, strict=True)
        )


def parse_address(text: str) -> str | None:
    """`ipaddr:192.168.1.8` and `netmask:255.255.255.0` lines -> `192.168.1.8/24`; None where
    there is no valid address."""
    fields = dict(line.strip().partition(":")[::2] for line in text.splitlines() if ":" in line)
    address, netmask = fields.get("ipaddr", "").strip(), fields.get("netmask", "").strip()
    if not address:
        return None
    try:
        return interface_address(f"{address}/{netmask}" if netmask else address)
    except ValueError:
        log.debug("hccn_tool answered an address that is none: %r", address[:64])
        return None
