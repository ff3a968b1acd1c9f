"""The classic device plugin's resources: one per chip family (`huawei.com/Ascend910`), each
served on its own socket, their names overridable per family."""

from collections.abc import Iterable

from npu_dra.domain.device import Device
from npu_dra.domain.errors import DomainError
from npu_dra.domain.names import extended_resource_problem
from npu_dra.domain.profile import profile_named


class BadResourceName(DomainError, ValueError):
    """`--resource-name` names something the kubelet would not accept."""


def by_family(devices: Iterable[Device]) -> dict[str, tuple[Device, ...]]:
    """Devices per chip family (one kubelet resource each), in physical-id order."""
    families: dict[str, list[Device]] = {}
    for device in sorted(devices, key=lambda d: d.physical_id):
        family = profile_named(device.profile).family_of(device.chip_name)
        families.setdefault(family, []).append(device)
    return {family: tuple(members) for family, members in sorted(families.items())}


def socket_name(family: str) -> str:
    return f"npu-dra-{family.lower()}.sock"


def resource_names(families: Iterable[str], *, override: str, prefix: str) -> dict[str, str]:
    """`<prefix>/<family>` each, unless `override` is one NAME or `FAMILY=NAME,...` pairs."""
    names = {family: f"{prefix}/{family}" for family in families}
    if override and "=" not in override:
        if len(names) > 1:
            raise BadResourceName(
                f"--resource-name {override!r}: several families, give FAMILY=NAME"
            )
        names = dict.fromkeys(names, override)
    elif override:
        pairs = (p.partition("=") for p in override.split(",") if p.strip())
        names |= {f.strip(): n.strip() for f, _, n in pairs if f.strip() in names}
    for name in names.values():
        if problem := extended_resource_problem(name):
            raise BadResourceName(f"{name!r} is not an extended resource name: {problem}")
    return names
