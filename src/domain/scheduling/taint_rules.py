"""DeviceTaintRule (resource.k8s.io/v1alpha3, KEP-5055): a rule selects devices by driver, pool
and device name (each optional: unset selects all) and adds its taint to each, beside the taints
the driver published. The scheduler sees both; the slices as the API server serves them keep
only the driver's.

Which versions serve the rules: v1.34.3 with DRADeviceTaints, v1.36.3 with DRADeviceTaintRules
(off by default there, though DRADeviceTaints is on). A NoExecute rule also evicts pods already
running on the device; simulate moves no bound pod, so only scheduling is decided.
"""

from collections.abc import Iterable, Sequence

import attrs

from npu_dra.domain.device_taints import DeviceTaint
from npu_dra.domain.pool import ResourceSlice
from npu_dra.domain.scheduling.versions import SchedulerVersion

RULES_GATE = "DRADeviceTaintRules"  # v1.35 on; before it DRADeviceTaints covers the rules


@attrs.frozen
class DeviceTaintRule:
    name: str
    taint: DeviceTaint
    driver: str | None = None
    pool: str | None = None
    device: str | None = None

    def selects(self, driver: str, pool: str, device: str) -> bool:
        return all(
            want is None or want == have
            for want, have in ((self.driver, driver), (self.pool, pool), (self.device, device))
        )


def rules_gate(version: SchedulerVersion) -> str:
    """The gate that makes the API server serve DeviceTaintRules in `version`."""
    return RULES_GATE if RULES_GATE in version.gates else "DRADeviceTaints"


def rules_served(version: SchedulerVersion) -> bool:
    return version.on(rules_gate(version)) and version.on("DRADeviceTaints")


def with_taint_rules(
    slices: Iterable[ResourceSlice], rules: Sequence[DeviceTaintRule]
) -> list[ResourceSlice]:
    """The slices as the scheduler sees them: each device with the taints of the rules that
    select it added after its own."""
    if not rules:
        return list(slices)
    return [_tainted(s, rules) for s in slices]


def _tainted(found: ResourceSlice, rules: Sequence[DeviceTaintRule]) -> ResourceSlice:
    devices = []
    for device in found.devices:
        added = tuple(
            r.taint for r in rules if r.selects(found.driver, found.pool.name, device.name)
        )
        devices.append(attrs.evolve(device, taints=(*device.taints, *added)) if added else device)
    return attrs.evolve(found, devices=tuple(devices))
