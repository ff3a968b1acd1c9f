"""What an unhealthy device tells the scheduler: a device taint (KEP-5055) per health word.

Where the API server serves `devices[].taints` (resource.k8s.io/v1; the DRADeviceTaints gate,
on by default from 1.36), a device that is not usable stays in the pool with a taint, so the
scheduler can tell "broken" from "gone" and a pod that tolerates the taint can still get it.
The default table, written down here and in docs/health.md:

    health     npu-smi word           taint effect
    Healthy    OK                     none
    Degraded   Warning                none (a minor alarm; the chip still works)
    Unhealthy  Alarm, /dev missing    NoSchedule (new pods keep off; running ones stay)
    Critical   Critical               NoExecute (pods using it are evicted too)
    Unknown    UNKNOWN                NoSchedule

Where a chip reports error codes, its health word is the one its most severe code's handling
level gives (fault_codes.py: e.g. SeparateNPU -> Critical -> NoExecute), not npu-smi's.
An operator can change any row (`--taint-effects Degraded=NoSchedule,Critical=NoSchedule`);
Healthy is never tainted. The taint's key is `<driver>/health` and its value the health word.
"""

import enum
from collections.abc import Mapping

import attrs

from npu_dra.domain.device import Device, Health
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName


class TaintEffect(enum.Enum):
    NO_SCHEDULE = "NoSchedule"
    NO_EXECUTE = "NoExecute"


@attrs.frozen
class DeviceTaint:
    key: str
    value: str
    effect: TaintEffect


NO_TAINT = "None"
DEFAULT_EFFECTS: Mapping[Health, TaintEffect | None] = {
    Health.HEALTHY: None,
    Health.DEGRADED: None,
    Health.UNHEALTHY: TaintEffect.NO_SCHEDULE,
    Health.CRITICAL: TaintEffect.NO_EXECUTE,
    Health.UNKNOWN: TaintEffect.NO_SCHEDULE,
}


class TaintPolicyError(DomainError):
    """A --taint-effects value names an unknown health word or effect."""


@attrs.frozen
class TaintPolicy:
    """Which effect each health word gets (a word mapped to None is not tainted), and the
    taint's key (`for_driver` makes it `<driver>/health`)."""

    effects: Mapping[Health, TaintEffect | None] = attrs.field(factory=lambda: DEFAULT_EFFECTS)
    key: str = "health"

    def for_driver(self, driver: DriverName) -> "TaintPolicy":
        return attrs.evolve(self, key=f"{driver}/health")

    def effect_of(self, health: Health) -> TaintEffect | None:
        if health is Health.HEALTHY:
            return None
        return self.effects.get(health, DEFAULT_EFFECTS[health])

    def taints_of(self, device: Device) -> tuple[DeviceTaint, ...]:
        effect = self.effect_of(device.health)
        if effect is None:
            return ()
        return (DeviceTaint(self.key, device.health.value, effect),)


def parse_taint_policy(text: str) -> TaintPolicy:
    """`Word=Effect,...` over the defaults, e.g. `Degraded=NoSchedule,Critical=NoSchedule`;
    the effect `None` untaints a word. An empty text is the default table."""
    words = {h.value: h for h in Health}
    effects = {e.value: e for e in TaintEffect}
    chosen: dict[Health, TaintEffect | None] = dict(DEFAULT_EFFECTS)
    for item in filter(None, (part.strip() for part in text.split(","))):
        word, _, effect = (s.strip() for s in item.partition("="))
        if word not in words or word == Health.HEALTHY.value:
            known = ", ".join(w for w in words if w != Health.HEALTHY.value)
            raise TaintPolicyError(f"taint effects: {word!r} is not a health word ({known})")
        if effect != NO_TAINT and effect not in effects:
            known = ", ".join([*effects, NO_TAINT])
            raise TaintPolicyError(f"taint effects: {item!r}: effect must be one of {known}")
        chosen[words[word]] = None if effect == NO_TAINT else effects[effect]
    return TaintPolicy(chosen)
