"""Recorded vNPU facts per chip model, for fake hardware and the simulation (`vnpu: 910B4`).

Each preset is what `npu-smi info -t template-info` and `npu-smi info -t info-vnpu` (Total
column) printed on a real host (tests/fixtures/npu-smi, sources named in each file's first
line). Only these three were recorded; other models' templates are in ascend-facts A.7 but
their totals are not, so they are not offered here. A description's templates are held to the
rules npu-smi's are (domain/vnpu/vetting.py), but refused instead of left out.
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.domain.vnpu.templates import Template, VnpuOffer
from npu_dra.domain.vnpu.vetting import vet_templates

_Needs = dict[str, int]


_COLUMNS = ("aicore", "memory", "aicpu", "vpc", "venc", "jpegd", "pngd", "vdec", "jpege")


def _t(*values: int) -> _Needs:
    """A template in template-info's order: the first line's six numbers, then the second's."""
    return dict(zip(_COLUMNS, values, strict=True))


PRESETS: dict[str, tuple[_Needs, dict[str, _Needs]]] = {
    # info-vnpu_910B4-32G_empty + template-info_910B4-32G (Atlas 800I A2, 910B4 32 GB)
    "910B4": (
        {"aicore": 20, "memory": 32, "aicpu": 6, "vpc": 9, "venc": 0, "vdec": 2, "jpegd": 24,
         "jpege": 4},
        {
            "vir10_3c_16g": _t(10, 16, 3, 4, 0, 12, 0, 1, 2),
            "vir10_4c_16g_m": _t(10, 16, 4, 9, 0, 24, 0, 2, 4),
            "vir10_3c_16g_nm": _t(10, 16, 3, 0, 0, 0, 0, 0, 0),
            "vir05_1c_8g": _t(5, 8, 1, 2, 0, 6, 0, 0, 1),
        },
    ),
    # info-vnpu_910B4-1-64G_empty + template-info_910B4-1-64G (910B4-1 64 GB, npu-smi 26.0.rc1)
    "910B4-1": (
        {"aicore": 20, "memory": 64, "aicpu": 6, "vpc": 9, "venc": 0, "vdec": 2, "jpegd": 24,
         "jpege": 4},
        {
            "vir10_3c_32g": _t(10, 32, 3, 4, 0, 12, 0, 1, 2),
            "vir05_1c_16g": _t(5, 16, 1, 2, 0, 6, 0, 0, 1),
        },
    ),
}  # fmt: skip


def vnpu_offer_from(description: Any) -> VnpuOffer:
    """`vnpu:` of a node description: a preset name, or {preset?, totals?, templates?}."""
    spec: Mapping[str, Any] = (
        {"preset": description} if isinstance(description, str) else description
    )
    if not isinstance(spec, Mapping):
        raise ValueError(f"vnpu {description!r}: expected a preset name or a mapping")
    totals, templates = PRESETS.get(str(spec.get("preset")), ({}, {}))
    if "preset" in spec and str(spec["preset"]) not in PRESETS:
        raise ValueError(f"vnpu preset {spec['preset']!r}: known are {', '.join(PRESETS)}")
    totals = {str(k): int(v) for k, v in (spec.get("totals") or totals).items()}
    chosen = spec.get("templates") or templates
    vetted = vet_templates(
        Template(str(n), {str(k): int(v) for k, v in needs.items()}) for n, needs in chosen.items()
    )
    if vetted.problems:  # a description is the user's to fix: refused, not trimmed
        raise ValueError(f"vnpu templates: {'; '.join(vetted.problems)}")
    return VnpuOffer(totals, vetted.templates)
