"""What DCMI says of each chip: one pass of calls per chip, checked as Huawei's plugin checks them.

The call sequence is the one Huawei's device plugin makes (github.com/Ascend/mind-cluster
component/ascend-common/devmanager/dcmi/dcmi.go: DcGetCardList, DcGetDeviceNumInCard,
DcGetDeviceLogicID, DcGetPhysicIDFromLogicID, DcGetDeviceErrorCode, DcGetAffinityCpuInfo,
FuncDcmiGetDeviceHbmInfo / DcGetMemoryInfo), with the same range checks: a card count or an
error count out of range is an error, never a shorter list. HBM size (910 family) is preferred;
chips without HBM (310 family: -8255) report their DDR size through memory_info_v3.
"""

import ctypes

import attrs

from npu_dra.adapters.hardware.dcmi.library import (
    AFFINITY_BUFFER,
    MAX_CARDS,
    MAX_ERROR_CODES,
    NOT_SUPPORTED,
    DcmiError,
    check,
)
from npu_dra.adapters.hardware.dcmi.network import device_ip, super_pod_id
from npu_dra.adapters.hardware.dcmi.structs import ChipInfo, HbmInfo, MemoryInfo, PcieInfoAll, text
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_topo import parse_cpu_list


@attrs.frozen
class DcmiChip:
    card_id: int
    chip_id: int  # DCMI's device id within the card
    logic_id: int
    physical_id: int
    name: str
    aicores: int
    memory_mib: int
    bus_id: str | None
    health_code: int
    error_codes: tuple[int, ...]
    affinity: frozenset[int] | None
    device_ip: str | None = None  # network.py
    super_pod_id: int | None = None


def read_chips(lib: ctypes.CDLL) -> tuple[DcmiChip, ...]:
    return tuple(read_chip(lib, card, device) for card, device in chip_places(lib))


def chip_places(lib: ctypes.CDLL) -> tuple[tuple[int, int], ...]:
    """(card, device) of every chip DCMI lists, in its order."""
    return tuple((card, device) for card in _cards(lib) for device in _devices(lib, card))


def read_health(lib: ctypes.CDLL, chip: DcmiChip) -> DcmiChip:
    """`chip` with its health code and error codes read again: what changes between two full
    reads of the same chips (probe.py)."""
    card, device = chip.card_id, chip.chip_id
    at = f"card {card} device {device}"
    return attrs.evolve(
        chip,
        health_code=_health_code(lib, card, device, at),
        error_codes=_error_codes(lib, card, device, at),
    )


def _cards(lib: ctypes.CDLL) -> list[int]:
    count, cards = ctypes.c_int(), (ctypes.c_int * MAX_CARDS)()
    check("dcmi_get_card_list", lib.dcmi_get_card_list(ctypes.byref(count), cards, MAX_CARDS))
    if not 0 <= count.value <= MAX_CARDS:
        raise ProbeError(f"dcmi_get_card_list: card count {count.value} out of 0..{MAX_CARDS}")
    return [cards[i] for i in range(count.value)]


def _devices(lib: ctypes.CDLL, card: int) -> range:
    count = ctypes.c_int()
    call = f"dcmi_get_device_num_in_card(card {card})"
    check(call, lib.dcmi_get_device_num_in_card(card, ctypes.byref(count)))
    if not 0 <= count.value <= MAX_CARDS:
        raise ProbeError(f"{call}: device count {count.value} out of 0..{MAX_CARDS}")
    return range(count.value)


def read_chip(lib: ctypes.CDLL, card: int, device: int) -> DcmiChip:
    at = f"card {card} device {device}"
    logic, physical = ctypes.c_int(), ctypes.c_uint()
    check(
        f"dcmi_get_device_logic_id({at})",
        lib.dcmi_get_device_logic_id(ctypes.byref(logic), card, device),
    )
    check(
        f"dcmi_get_device_phyid_from_logicid({logic.value})",
        lib.dcmi_get_device_phyid_from_logicid(logic.value, ctypes.byref(physical)),
    )
    info = ChipInfo()
    check(
        f"dcmi_get_device_chip_info({at})",
        lib.dcmi_get_device_chip_info(card, device, ctypes.byref(info)),
    )
    return DcmiChip(
        card_id=card,
        chip_id=device,
        logic_id=logic.value,
        physical_id=physical.value,
        name=text(info.chip_name),
        aicores=info.aicore_cnt,
        memory_mib=_memory_mib(lib, card, device, at),
        bus_id=_bus_id(lib, card, device, at),
        health_code=_health_code(lib, card, device, at),
        error_codes=_error_codes(lib, card, device, at),
        affinity=_affinity(lib, card, device, at),
        device_ip=device_ip(lib, card, device),
        super_pod_id=super_pod_id(lib, card, device),
    )


def _health_code(lib: ctypes.CDLL, card: int, device: int, at: str) -> int:
    health = ctypes.c_uint()
    check(
        f"dcmi_get_device_health({at})",
        lib.dcmi_get_device_health(card, device, ctypes.byref(health)),
    )
    return health.value


def _memory_mib(lib: ctypes.CDLL, card: int, device: int, at: str) -> int:
    hbm = HbmInfo()
    code = lib.dcmi_get_device_hbm_info(card, device, ctypes.byref(hbm))
    if code == 0 and hbm.memory_size:
        return int(hbm.memory_size)
    if code not in (0, NOT_SUPPORTED):
        raise DcmiError(f"dcmi_get_device_hbm_info({at})", code)
    memory = MemoryInfo()
    call = f"dcmi_get_device_memory_info_v3({at})"
    check(call, lib.dcmi_get_device_memory_info_v3(card, device, ctypes.byref(memory)))
    if memory.memory_size < memory.memory_available:
        raise ProbeError(f"{call}: total memory is less than available memory")
    return int(memory.memory_size)


def _bus_id(lib: ctypes.CDLL, card: int, device: int, at: str) -> str | None:
    """`DDDD:BB:DD.F` as npu-smi prints it; None where the chip has no PCIe function (SoCs)."""
    pcie = PcieInfoAll()
    code = lib.dcmi_get_device_pcie_info_v2(card, device, ctypes.byref(pcie))
    if code == NOT_SUPPORTED:
        return None
    check(f"dcmi_get_device_pcie_info_v2({at})", code)
    return f"{pcie.domain:04X}:{pcie.bdf_busid:02X}:{pcie.bdf_deviceid:02X}.{pcie.bdf_funcid:X}"


def _error_codes(lib: ctypes.CDLL, card: int, device: int, at: str) -> tuple[int, ...]:
    count, codes = ctypes.c_int(), (ctypes.c_uint * MAX_ERROR_CODES)()
    call = f"dcmi_get_device_errorcode_v2({at})"
    check(
        call,
        lib.dcmi_get_device_errorcode_v2(card, device, ctypes.byref(count), codes, MAX_ERROR_CODES),
    )
    if not 0 <= count.value <= MAX_ERROR_CODES:
        raise ProbeError(f"{call}: error count {count.value} out of 0..{MAX_ERROR_CODES}")
    return tuple(codes[i] for i in range(count.value))


def _affinity(lib: ctypes.CDLL, card: int, device: int, at: str) -> frozenset[int] | None:
    """The chip's CPU affinity list ("0-23"); None where DCMI does not offer it."""
    buffer, length = ctypes.create_string_buffer(AFFINITY_BUFFER), ctypes.c_int()
    call = f"dcmi_get_affinity_cpu_info_by_device_id({at})"
    code = lib.dcmi_get_affinity_cpu_info_by_device_id(card, device, buffer, ctypes.byref(length))
    if code == NOT_SUPPORTED:
        return None
    check(call, code)
    if not 0 <= length.value <= AFFINITY_BUFFER:
        raise ProbeError(f"{call}: length {length.value} out of 0..{AFFINITY_BUFFER}")
    raw = buffer.raw[: length.value].split(b"\0", 1)[0].decode("ascii", errors="replace")
    cpus = parse_cpu_list(raw.strip()) if raw.strip() else None
    if raw.strip() and cpus is None:
        raise ProbeError(f"{call}: {raw!r} is not a CPU list")
    return cpus
