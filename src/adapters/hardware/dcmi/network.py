"""Where an NPU sits on the network, as DCMI tells it: its RoCE address (the HCCL rank table's
`device_ip`) and its SuperPoD (A3 SuperPoD nodes), for claim status and metadata
(domain/device_facts.py). Both optional: a library without the call, a chip that does not
support it (-8255) or has no address set answers None, and the fact is left out.

Calls as Huawei's device plugin makes them (github.com/Ascend/mind-cluster 22bb3d98,
component/ascend-common/devmanager/dcmi/dcmi.go): DcGetDeviceIPAddress calls
`dcmi_get_device_ip(card, device, 1 (DCMI_ROCE_PORT), 0, &ip, &mask)`; DcGetSuperPodInfo calls
`dcmi_get_device_info(card, device, 12 (MainCmdChipInf), 1 (CinfSubCmdGetSPodInfo), &info,
&size)` (dcmi/constants.go).
"""

import ctypes
import ipaddress

from npu_dra.adapters.hardware.dcmi.library import offers
from npu_dra.adapters.hardware.dcmi.network_structs import IPV4, IPV6, IpAddr, SpodInfo

ROCE_PORT = 1
MAIN_CMD_CHIP_INF = 12
SUB_CMD_SPOD_INFO = 1
UNSET_ID = 0xFFFFFFFF


def device_ip(lib: ctypes.CDLL, card: int, device: int) -> str | None:
    """`a.b.c.d/prefix`, or None where DCMI tells none."""
    if not offers(lib, "dcmi_get_device_ip"):
        return None
    ip, mask = IpAddr(), IpAddr()
    if lib.dcmi_get_device_ip(card, device, ROCE_PORT, 0, ctypes.byref(ip), ctypes.byref(mask)):
        return None
    address, netmask = _address(ip), _address(mask)
    if address is None or address.is_unspecified:
        return None
    same = netmask is not None and netmask.version == address.version
    prefix = _prefix(netmask if same else None, address.max_prefixlen)
    return f"{address}/{prefix}"


def super_pod_id(lib: ctypes.CDLL, card: int, device: int) -> int | None:
    if not offers(lib, "dcmi_get_device_info"):
        return None
    info, size = SpodInfo(), ctypes.c_uint(ctypes.sizeof(SpodInfo))
    code = lib.dcmi_get_device_info(
        card, device, MAIN_CMD_CHIP_INF, SUB_CMD_SPOD_INFO, ctypes.byref(info), ctypes.byref(size)
    )
    if code or info.super_pod_id == UNSET_ID:
        return None
    return int(info.super_pod_id)


def _address(raw: IpAddr) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if raw.ip_type == IPV4:
        return ipaddress.IPv4Address(bytes(raw.u_addr.ip4))
    if raw.ip_type == IPV6:
        return ipaddress.IPv6Address(bytes(raw.u_addr.ip6))
    return None


def _prefix(mask: ipaddress.IPv4Address | ipaddress.IPv6Address | None, full: int) -> int:
    """The mask's prefix length; the full length where the mask is missing or not contiguous."""
    if mask is None:
        return full
    bits = int(mask)
    ones = bin(bits).count("1")
    contiguous = bits == ((1 << full) - 1) ^ ((1 << (full - ones)) - 1)
    return ones if contiguous and ones else full
