"""Whether vNPUs go through DCMI: where the chips are probed through it and the library has the
vNPU calls; otherwise (logged) through npu-smi as before."""

import logging

from npu_dra.adapters.hardware.dcmi import library
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.adapters.hardware.dcmi.vnpu import DcmiVnpuTable
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.vnpu import NpuSmiVnpuTable
from npu_dra.domain.ports import HardwareProbe

log = logging.getLogger(__name__)


def dcmi_vnpu_table(probe: HardwareProbe, offers: NpuSmiVnpuTable) -> DcmiVnpuTable | None:
    if not isinstance(probe, DcmiProbe):
        return None
    try:
        loaded = probe.start()
    except ProbeError as error:
        log.warning("vNPUs through npu-smi: DCMI did not start: %s", error)
        return None
    if not library.offers(loaded, *library.VNPU_CALLS):
        log.warning("vNPUs through npu-smi: libdcmi.so lacks %s", ", ".join(library.VNPU_CALLS))
        return None
    log.info("vNPUs are created and destroyed through DCMI (templates read from npu-smi)")
    return DcmiVnpuTable(dcmi=loaded, offers=offers)
