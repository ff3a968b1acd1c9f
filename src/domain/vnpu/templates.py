"""vNPU templates and a chip's resource totals, in npu-smi's own units (memory in GB).

Counter names are DNS labels, as ResourceSlice counters must be; npu-smi's columns map to them
one to one (AICORE -> aicore, Memory -> memory, JPEGD -> jpegd ...).
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.errors import InventoryError

COUNTERS = ("aicore", "memory", "aicpu", "vpc", "venc", "vdec", "jpegd", "jpege", "pngd")
MEMORY = "memory"  # in GB (GiB: npu-smi's 16 GB template is half of a 32768 MB chip)
AICORE = "aicore"


def _counts(value: Mapping[str, int]) -> dict[str, int]:
    return dict(value)


def _check_counters(what: str, counts: Mapping[str, int]) -> None:
    unknown = sorted(set(counts) - set(COUNTERS))
    if unknown:
        raise InventoryError(f"{what}: unknown counter(s) {', '.join(unknown)}")
    negative = sorted(k for k, v in counts.items() if v < 0)
    if negative:
        raise InventoryError(f"{what}: negative counter(s) {', '.join(negative)}")


@attrs.frozen
class Template:
    """One line pair of `npu-smi info -t template-info`: what one vNPU of it takes."""

    name: str
    needs: Mapping[str, int] = attrs.field(converter=_counts)

    def __attrs_post_init__(self) -> None:
        _check_counters(f"template {self.name!r}", self.needs)
        if not self.needs.get(AICORE):
            raise InventoryError(f"template {self.name!r}: takes no AI core")

    def consumed(self) -> dict[str, int]:
        """The counters it takes (zero entries dropped: a slice may not consume nothing)."""
        return {k: v for k, v in self.needs.items() if v > 0}


@attrs.frozen
class VnpuOffer:
    """What one chip can be split into: its totals and the templates the driver offers."""

    totals: Mapping[str, int] = attrs.field(converter=_counts)
    templates: tuple[Template, ...] = ()

    def __attrs_post_init__(self) -> None:
        _check_counters("chip totals", self.totals)

    def counters(self) -> dict[str, int]:
        """Totals worth a counter (zero or unknown ones, like a 910B's VENC 0/0, dropped)."""
        return {k: v for k, v in self.totals.items() if v > 0}

    def placements(self, template: Template) -> int:
        """How many vNPUs of `template` the chip holds at once (0 if it lacks a resource)."""
        totals = self.counters()
        return min(totals.get(k, 0) // v for k, v in template.consumed().items())

    def template(self, name: str) -> Template | None:
        return next((t for t in self.templates if t.name == name), None)
