"""What npu-smi offers, vetted before it becomes a VnpuOffer: one bad entry costs only itself.

Templates and totals are input like any other. A template whose name makes no device name, is
longer than MAX_TEMPLATE_NAME, makes the same device names as an earlier one (names differing
only by case or `_`/`-`), comes after the MAX_TEMPLATES-th, or would take the chip past
MAX_VNPU_DEVICES_PER_CHIP is left out; totals no chip has leave the chip whole (no offer). Each
is returned as a problem, for the caller to report once; the rest is offered, so the pool still
publishes the whole chips and the other templates.
"""

from collections.abc import Iterable, Mapping

import attrs

from npu_dra.domain.attributes import is_dns_label
from npu_dra.domain.errors import InventoryError
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.vnpu.instance import IDS_PER_CHIP
from npu_dra.domain.vnpu.templates import (
    MAX_TEMPLATES,
    MAX_VNPU_DEVICES_PER_CHIP,
    Template,
    VnpuOffer,
    shown,
    template_label,
)

# Recorded names are at most 15 characters (vir10_3c_16g_nm); a device name `<chip>-<name>-<n>`
# must fit a 63-character DNS label, and the vnpuTemplate attribute 64 characters.
MAX_TEMPLATE_NAME = 40


@attrs.frozen
class Vetted:
    """The templates kept, in npu-smi's order, and why each other one was left out."""

    templates: tuple[Template, ...]
    problems: tuple[str, ...] = ()


@attrs.frozen
class VettedOffer:
    offer: VnpuOffer | None  # None: the chip is published whole
    problems: tuple[str, ...] = ()


def vet_templates(templates: Iterable[Template]) -> Vetted:
    """Names that make device names, one template per device name (the first), and no more
    than MAX_TEMPLATES of them."""
    kept: dict[str, Template] = {}
    problems: list[str] = []
    for template in templates:
        problem = _name_problem(template.name) or _same_names(template, kept)
        if problem is None and len(kept) == MAX_TEMPLATES:
            problem = f"template {shown(template.name)}: past the first {MAX_TEMPLATES}; left out"
        if problem is not None:
            problems.append(problem)
            continue
        kept[template_label(template.name)] = template
    return Vetted(tuple(kept.values()), tuple(problems))


def vet_offer(
    chip: DeviceName,
    totals: Mapping[str, int],
    templates: Iterable[Template],
    *,
    ids: int = IDS_PER_CHIP,
) -> VettedOffer:
    """The offer of `chip` (`ids` vNPU ids): vetted templates whose device names fit the chip's
    name, while its vNPU devices stay within MAX_VNPU_DEVICES_PER_CHIP; None if its totals are
    wild."""
    try:
        bare = VnpuOffer(totals, ids=ids)
    except InventoryError as error:
        return VettedOffer(None, (f"{chip}: {error}; the chip is published whole",))
    vetted = vet_templates(templates)
    problems, kept, devices = list(vetted.problems), [], 0
    for template in vetted.templates:
        name = f"{chip}-{template_label(template.name)}-{ids - 1}"
        count = bare.placements(template)
        if not is_dns_label(name):
            problems.append(
                f"template {shown(template.name)} on {chip}: {shown(name)} is too long; left out"
            )
        elif devices + count > MAX_VNPU_DEVICES_PER_CHIP:
            problems.append(
                f"template {shown(template.name)} on {chip}: {count} more vNPU devices would "
                f"pass the {MAX_VNPU_DEVICES_PER_CHIP} one chip publishes; left out"
            )
        else:
            kept.append(template)
            devices += count
    return VettedOffer(VnpuOffer(totals, tuple(kept), ids), tuple(problems))


def _name_problem(name: str) -> str | None:
    if len(name) > MAX_TEMPLATE_NAME:
        return f"template {shown(name)}: longer than {MAX_TEMPLATE_NAME} characters; left out"
    if not is_dns_label(template_label(name)):
        return (
            f"template {shown(name)}: makes no device name (lower-cased, `_` as `-`, it is no "
            "DNS label); left out"
        )
    return None


def _same_names(template: Template, kept: Mapping[str, Template]) -> str | None:
    first = kept.get(template_label(template.name))
    if first is None:
        return None
    return (
        f"template {shown(template.name)}: makes the same device names as "
        f"{shown(first.name)} (names differing only by case or `_`/`-`); the first is kept"
    )
