"""Whether the sharing mode goes through DCMI: where the chips are probed through it and the
library has the calls; otherwise (logged) through npu-smi."""

import logging

from npu_dra.adapters.hardware.dcmi import library
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.adapters.hardware.dcmi.sharing_mode import DcmiSharingMode
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.ports import HardwareProbe

log = logging.getLogger(__name__)


def dcmi_device_share(probe: HardwareProbe) -> DcmiSharingMode | None:
    if not isinstance(probe, DcmiProbe):
        return None
    try:
        loaded = probe.start()
    except ProbeError as error:
        log.warning("chips' sharing mode through npu-smi: DCMI did not start: %s", error)
        return None
    if not library.offers(loaded, *library.DEVICE_SHARE_CALLS):
        calls = ", ".join(library.DEVICE_SHARE_CALLS)
        log.warning("chips' sharing mode through npu-smi: libdcmi.so lacks %s", calls)
        return None
    return DcmiSharingMode(dcmi=loaded)
