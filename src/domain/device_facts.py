"""What a prepared device is, as a job needs to know it: the facts the claim's `status.devices`
entry (KEP-4817) and the container's metadata file (KEP-5304) both carry, from one function so
the two cannot disagree.

Per device: its chip's physical id (the N of /dev/davinciN, the `device_id` of an HCCL rank
table), PCI bus id, NUMA node, HCCS topology group, the share it holds (shared chips), its vNPU
id and template (vNPU devices), and where the hardware told them, the device IP (the NPU's RoCE
address, the rank table's `device_ip`) and SuperPoD id. A fact the node does not know is left
out, never guessed. Names and forms are the slice's attributes' where one exists (a PCI bus id
in lower case).

Limits (k8s.io/kubernetes pkg/apis/resource/validation and types.go, v1.34.3 and v1.36.3 alike):
`data` is a JSON object of at most 10 KiB (AllocatedDeviceStatusDataMaxLength), `networkData.ips`
at most 16 (NetworkDeviceDataMaxIPs) addresses in CIDR form (IsValidInterfaceAddress), at most
8 conditions (AllocatedDeviceStatusMaxConditions); each entry's driver/pool/device/shareID must be
one of the claim's allocated results ("must be an allocated device in the claim").
"""

import ipaddress
import json
from collections.abc import Mapping

import attrs

from npu_dra.domain.checkpoint import PreparedClaim, PreparedDevice
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import DriverName

DATA_MAX_BYTES = 10 * 1024
MAX_IPS = 16
FactValue = int | str


@attrs.frozen
class DeviceFacts:
    """One prepared device: the result it answers (driver, pool, device, shareID), its facts by
    name, and its IPs (CIDR form: `networkData.ips`)."""

    driver: DriverName
    pool: str
    device: str
    share_id: str | None
    requests: tuple[str, ...]
    facts: Mapping[str, FactValue]
    ips: tuple[str, ...] = ()

    def data_json(self) -> str:
        """`facts` as the status entry's `data` (sorted keys, compact); PrepareError past the
        server's 10 KiB limit, so a write is never refused whole for one device."""
        text = json.dumps(dict(self.facts), sort_keys=True, separators=(",", ":"))
        if len(text.encode()) > DATA_MAX_BYTES:
            raise PrepareError(f"device {self.device}: status data is over {DATA_MAX_BYTES} bytes")
        return text


def claim_facts(
    claim: PreparedClaim, inventory: NodeInventory, driver: DriverName
) -> tuple[DeviceFacts, ...]:
    """The facts of each of the claim's prepared devices whose chip is on this node (admin
    access included: it was allocated, so the entry is allowed); a chip gone since is left out."""
    found = []
    for prepared in claim.devices:
        chip = inventory.get(prepared.chip)
        if chip is not None:
            found.append(device_facts(prepared, chip, driver))
    return tuple(found)


def device_facts(prepared: PreparedDevice, chip: Device, driver: DriverName) -> DeviceFacts:
    facts: dict[str, FactValue] = {"physicalId": chip.physical_id, "chip": chip.name}
    optional: dict[str, FactValue | None] = {
        "pciBusID": None if chip.pci_bus_id is None else chip.pci_bus_id.lower(),
        "numaNode": chip.numa_node,
        "topologyGroup": chip.topology_group,
        "superPodId": chip.super_pod_id,
        "deviceIP": None if chip.device_ip is None else _address(chip.device_ip),
    }
    if prepared.vnpu is not None:
        optional |= {"vnpuId": prepared.vnpu.vnpu_id, "vnpuTemplate": prepared.vnpu.template}
    if prepared.shares_chip:
        share = prepared.share
        optional |= {"shareMemoryMiB": share.memory_mib, "shareAICores": share.aicores}
    facts |= {k: v for k, v in optional.items() if v is not None}
    return DeviceFacts(
        driver=driver,
        pool=prepared.pool,
        device=prepared.device,
        share_id=prepared.share_id,
        requests=tuple(prepared.request_names),
        facts=facts,
        ips=() if chip.device_ip is None else (chip.device_ip,),
    )


def interface_address(text: str) -> str:
    """`text` as CIDR (`192.168.1.8/24`; a bare address gets its full prefix); ValueError
    naming it otherwise. The hardware adapters call it, so a bad address never reaches the API."""
    try:
        return str(ipaddress.ip_interface(text.strip()))
    except ValueError:
        raise ValueError(f"device IP {text[:64]!r} is not an IP address") from None


def _address(cidr: str) -> str:
    return cidr.partition("/")[0]
