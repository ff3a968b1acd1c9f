"""The stand-in libdcmi.so's vNPU side as tests drive it: the host-file lines that tell it what
each chip may be split into, and a DcmiVnpuTable over it for a recorded host."""

from pathlib import Path

from npu_dra.adapters.hardware.vnpu_presets import vnpu_offer_from
from npu_dra.domain.vnpu.templates import VnpuOffer

# The order dcmi_stub_vnpu.c counts resources in (as npu-smi's info-vnpu columns).
RESOURCES = ("aicore", "memory", "aicpu", "vpc", "venc", "vdec", "jpegd", "jpege", "pngd")


def vnpu_lines(offer: VnpuOffer | None) -> list[str]:
    """`vnpu_totals` and one `vnpu_template` per template; -1 where the chip has none of it."""
    if offer is None:
        return []
    totals = " ".join(str(offer.totals.get(name, -1)) for name in RESOURCES)
    lines = [f"vnpu_totals {totals}"]
    for template in offer.templates:
        needs = " ".join(str(template.needs.get(name, 0)) for name in RESOURCES)
        lines.append(f"vnpu_template {template.name} {needs}")
    return lines


def vnpus_file(host_file: Path) -> Path:
    """Where the stand-in keeps the vNPUs it created."""
    return host_file.with_name(host_file.name + ".vnpus")


__all__ = ["vnpu_lines", "vnpu_offer_from", "vnpus_file"]
