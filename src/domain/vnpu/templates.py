"""vNPU templates and a chip's resource totals, in npu-smi's own units (memory in GB).

Counter names are DNS labels, as ResourceSlice counters must be; npu-smi's columns map to them
one to one (AICORE -> aicore, Memory -> memory, JPEGD -> jpegd ...).

Every number and name here comes from npu-smi, so each has a bound: a total or need over
MAX_COUNTER_TOTAL, more than MAX_TEMPLATES templates, two templates whose device names would be
the same, or more vNPU devices than MAX_VNPU_DEVICES_PER_CHIP make no offer (InventoryError);
vetting.py leaves such entries out before an offer is made.
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.errors import InventoryError
from npu_dra.domain.vnpu.instance import IDS_PER_CHIP

COUNTERS = ("aicore", "memory", "aicpu", "vpc", "venc", "vdec", "jpegd", "jpege", "pngd")
MEMORY = "memory"  # in GB (GiB: npu-smi's 16 GB template is half of a 32768 MB chip)
AICORE = "aicore"
# No chip totals more of anything than this (the largest recorded total is 64 GB of memory,
# tests/fixtures/npu-smi/*info-vnpu_910B4-1-64G*): 16384 times that, and still far from
# overflowing a 64-bit quantity once memory is counted in bytes.
MAX_COUNTER_TOTAL = 2**20
# ascend-facts A.7: no chip model offers more than 7 templates (310P).
MAX_TEMPLATES = 32
# A chip's vNPU devices share one ResourceSlice with the whole chip (the 1.34 layout), and
# k8s.io/api resource/v1 allows 1024 consumed counters per slice
# (ResourceSliceMaxDeviceCountersPerSlice) where each device here consumes at most
# len(COUNTERS) = 9: 1024 // 9 = 113 devices, the whole chip one of them.
MAX_VNPU_DEVICES_PER_CHIP = 112
QUOTE_CHARS = 200  # how much of a name from npu-smi an error or a log line quotes


def shown(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` quoted for an error or a log line, at most `limit` characters of it."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def template_label(template: str) -> str:
    """A template name as device names carry it: `vir05_1c_8g` -> `vir05-1c-8g`."""
    return template.lower().replace("_", "-")


def _counts(value: Mapping[str, int]) -> dict[str, int]:
    return dict(value)


def _check_counters(what: str, counts: Mapping[str, int]) -> None:
    unknown = sorted(set(counts) - set(COUNTERS))
    if unknown:
        raise InventoryError(f"{what}: unknown counter(s) {', '.join(map(shown, unknown))}")
    negative = sorted(k for k, v in counts.items() if v < 0)
    if negative:
        raise InventoryError(f"{what}: negative counter(s) {', '.join(negative)}")
    huge = sorted(k for k, v in counts.items() if v > MAX_COUNTER_TOTAL)
    if huge:
        listed = ", ".join(f"{k} {counts[k]}" for k in huge)
        raise InventoryError(f"{what}: {listed} over the bound of {MAX_COUNTER_TOTAL}")


@attrs.frozen
class Template:
    """One line pair of `npu-smi info -t template-info`: what one vNPU of it takes."""

    name: str
    needs: Mapping[str, int] = attrs.field(converter=_counts)

    def __attrs_post_init__(self) -> None:
        _check_counters(f"template {shown(self.name)}", self.needs)
        if not self.needs.get(AICORE):
            raise InventoryError(f"template {shown(self.name)}: takes no AI core")

    def consumed(self) -> dict[str, int]:
        """The counters it takes (zero entries dropped: a slice may not consume nothing)."""
        return {k: v for k, v in self.needs.items() if v > 0}


@attrs.frozen
class VnpuOffer:
    """What one chip can be split into: its totals and the templates the driver offers."""

    totals: Mapping[str, int] = attrs.field(converter=_counts)
    templates: tuple[Template, ...] = ()
    ids: int = IDS_PER_CHIP  # vNPU ids npu-smi gives the chip (instance.id_range: 8 on a 310P)

    def __attrs_post_init__(self) -> None:
        _check_counters("chip totals", self.totals)
        if len(self.templates) > MAX_TEMPLATES:
            raise InventoryError(f"{len(self.templates)} templates: at most {MAX_TEMPLATES}")
        first: dict[str, str] = {}
        for template in self.templates:
            label = template_label(template.name)
            if label in first:
                raise InventoryError(
                    f"templates {shown(first[label])} and {shown(template.name)} make the same "
                    "device names"
                )
            first[label] = template.name
        devices = sum(self.placements(t) for t in self.templates)
        if devices > MAX_VNPU_DEVICES_PER_CHIP:
            raise InventoryError(
                f"{devices} vNPU devices: one chip publishes at most {MAX_VNPU_DEVICES_PER_CHIP}"
            )

    def counters(self) -> dict[str, int]:
        """Totals worth a counter (zero or unknown ones, like a 910B's VENC 0/0, dropped)."""
        return {k: v for k, v in self.totals.items() if v > 0}

    def placements(self, template: Template) -> int:
        """How many vNPUs of `template` the chip holds at once (0 if it lacks a resource): no
        more than its totals allow, nor than the ids npu-smi gives the chip."""
        totals = self.counters()
        return min(self.ids, *(totals.get(k, 0) // v for k, v in template.consumed().items()))

    def template(self, name: str) -> Template | None:
        return next((t for t in self.templates if t.name == name), None)
