"""Which kube-scheduler simulate decides as: a Kubernetes version, its DRA feature gates, and the
allocator variant those select.

Gate defaults are those of k8s.io/kubernetes pkg/features/kube_features.go at v1.34.3, v1.36.3
and v1.37.2 (DRA gates only: the others change no DRA decision simulate makes). The scheduler turns
gates into allocator features in pkg/scheduler/framework/plugins/dynamicresources
(dynamicresources.go: v1.34.3 PreFilter's `structured.Features{...}`, v1.36.3
`AllocatorFeatures`; v1.37.2 alike, with more features), and `structured.NewAllocator`
(k8s.io/dynamic-resource-allocation structured/allocator.go) takes the first variant, most
stable first, whose SupportedFeatures cover every feature that is on
(structured/internal/{stable,incubating,experimental}).
"""

from collections.abc import Mapping

import attrs

from npu_dra.domain.errors import DomainError
from npu_dra.domain.scheduling.rules import AllocatorRules
from npu_dra.domain.scheduling.scoring import V134_SCORING, V136_SCORING, ScoringRules

V134 = "v1.34.3"
V136 = "v1.36.3"
V137 = "v1.37.2"  # decided by v1.36.3's allocator and scoring rules (SchedulerVersion)
VERSIONS = (V134, V136, V137)
DEFAULT_VERSION = V137

# gate -> default, per version (kube_features.go; a gate missing here is unknown to that version)
GATE_DEFAULTS: Mapping[str, Mapping[str, bool]] = {
    V134: {
        "DRAAdminAccess": True,
        "DRAConsumableCapacity": False,
        "DRADeviceBindingConditions": False,
        "DRADeviceTaints": False,
        "DRAExtendedResource": False,
        "DRAPartitionableDevices": False,
        "DRAPrioritizedList": True,
        "DRAResourceClaimDeviceStatus": True,
        "DRASchedulerFilterTimeout": True,
    },
    V136: {
        "DRAAdminAccess": True,  # GA, locked to true
        "DRAConsumableCapacity": True,
        "DRADeviceBindingConditions": True,
        "DRADeviceTaintRules": False,
        "DRADeviceTaints": True,
        "DRAExtendedResource": True,
        "DRAListTypeAttributes": False,
        "DRANodeAllocatableResources": False,
        "DRAPartitionableDevices": True,
        "DRAPrioritizedList": True,  # GA
        "DRAResourceClaimDeviceStatus": True,
        "DRAResourceClaimGranularStatusAuthorization": True,
        "DRAResourcePoolStatus": False,
        "DRASchedulerFilterTimeout": True,
        "DRAWorkloadResourceClaims": False,
    },
    V137: {
        "DRAAdminAccess": True,  # GA, locked to true
        "DRAConsumableCapacity": True,
        "DRADerivedAttributes": False,
        "DRADeviceBindingConditions": True,
        "DRADeviceCompatibilityGroups": False,
        "DRADeviceTaintRules": True,  # GA
        "DRADeviceTaints": True,  # GA
        "DRAExtendedResource": True,  # GA, locked to true
        # beta, on only from compatibility version 1.37 (MinCompatibilityVersion): a 1.37
        # binary's default compatibility version is 1.36
        "DRAFractionalCapacityRange": False,
        "DRAListTypeAttributes": False,
        "DRANodeAllocatableResources": False,
        "DRAOptionalNodeOperations": False,
        "DRAPartitionableDevices": True,
        "DRAPartitionableDevicesType": False,
        "DRAPrioritizedList": True,  # GA, locked to true
        "DRAResourceClaimDeviceStatus": True,  # GA, locked to true
        "DRAResourceClaimGranularStatusAuthorization": True,
        "DRAResourcePoolStatus": False,
        "DRASchedulerFilterTimeout": True,
        "DRAWorkloadResourceClaims": False,
    },
}
LOCKED: Mapping[str, frozenset[str]] = {
    V134: frozenset(),
    V136: frozenset({"DRAAdminAccess"}),
    V137: frozenset(
        {"DRAAdminAccess", "DRAExtendedResource", "DRAPrioritizedList"}
        | {"DRAResourceClaimDeviceStatus"}
    ),
}
# Gates whose allocator features simulate does not model: turning one on is refused.
UNMODELLED: Mapping[str, frozenset[str]] = {
    V134: frozenset(),
    V136: frozenset(),
    V137: frozenset(
        {"DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAFractionalCapacityRange"}
        | {"DRAOptionalNodeOperations", "DRAPartitionableDevicesType"}
    ),
}

# variant -> the allocator features it supports, most stable first, per version
VARIANTS: Mapping[str, tuple[tuple[str, frozenset[str]], ...]] = {
    V134: (
        ("stable", frozenset()),
        ("incubating", frozenset({"AdminAccess", "PrioritizedList", "Partitionable", "Taints"})),
        (
            "experimental",
            frozenset(
                {"AdminAccess", "PrioritizedList", "Partitionable", "Taints"}
                | {"DeviceBinding", "DeviceStatus", "ConsumableCapacity"}
            ),
        ),
    ),
    V136: (
        ("stable", frozenset({"AdminAccess", "PrioritizedList", "Partitionable", "Taints"})),
        (
            "incubating",
            frozenset(
                {"AdminAccess", "PrioritizedList", "Partitionable", "Taints"}
                | {"DeviceBindingAndStatus", "ConsumableCapacity"}
            ),
        ),
    ),
    # k8s.io/dynamic-resource-allocation v0.37.2 structured/internal/*/allocator_*.go
    V137: (
        ("stable", frozenset({"AdminAccess", "PrioritizedList", "Partitionable", "Taints"})),
        (
            "incubating",
            frozenset(
                {"AdminAccess", "PrioritizedList", "Partitionable", "Taints"}
                | {"DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange"}
            ),
        ),
        (
            "experimental",
            frozenset(
                {"AdminAccess", "PrioritizedList", "Partitionable", "Taints"}
                | {"DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange"}
                | {"ListTypeAttributes", "OptionalNodeOperations", "DerivedAttributes"}
                | {"CompatibilityGroups"}
            ),
        ),
    ),
}


class GateError(DomainError):
    """A --kubernetes-version or --feature-gates value the simulated version does not have."""


@attrs.frozen
class SchedulerVersion:
    """The version decided as, every DRA gate's value, and the allocator variant they select."""

    version: str
    gates: Mapping[str, bool]
    variant: str

    def on(self, gate: str) -> bool:
        return self.gates.get(gate, False)

    @property
    def pool_counters(self) -> bool:
        """Counter sets belong to the pool, in slices of their own (1.35+), not to one slice."""
        return self.version != V134

    @property
    def allocator(self) -> AllocatorRules:
        """The gates the allocator reads, and where the versions' searches differ."""
        return AllocatorRules(
            partitionable=self.on("DRAPartitionableDevices"),
            device_taints=self.on("DRADeviceTaints"),
            keeps_refused_counters=self.version == V134,
            distinct_values=self.version != V134,
            own_subrequest_keys=self.version != V134,
            resumes_search=self.version != V134,
            consumable=self.on("DRAConsumableCapacity"),
            shares_counters_once=self.version != V134,
            capacity_at_request_index=self.version == V134,
        )

    @property
    def scoring(self) -> ScoringRules:
        """Where the versions' score plugins differ (scoring.py)."""
        return V134_SCORING if self.version == V134 else V136_SCORING

    @property
    def changed(self) -> dict[str, bool]:
        """The gates set away from the version's defaults."""
        defaults = GATE_DEFAULTS[self.version]
        return {g: v for g, v in sorted(self.gates.items()) if defaults[g] != v}

    @property
    def label(self) -> str:
        changed = ",".join(f"{g}={str(v).lower()}" for g, v in self.changed.items())
        gates = f"gates {changed}" if changed else "default gates"
        return f"kube-scheduler {self.version} with {gates} ({self.variant} allocator)"


def scheduler_version(
    version: str = "", gates: Mapping[str, bool] | None = None
) -> SchedulerVersion:
    """The version named (`1.34`, `v1.36.3`; empty: the default) with `gates` over its defaults."""
    name = _version(version)
    defaults = GATE_DEFAULTS[name]
    chosen = dict(defaults)
    for gate, value in (gates or {}).items():
        if gate not in defaults:
            known = ", ".join(sorted(defaults))
            raise GateError(f"--feature-gates: {gate} is not a DRA gate of {name} ({known})")
        if gate in LOCKED[name] and value != defaults[gate]:
            raise GateError(
                f"--feature-gates: {gate} is locked to {str(defaults[gate]).lower()} in {name}"
            )
        if gate in UNMODELLED[name] and value:
            raise GateError(
                f"--feature-gates: {gate}=true: simulate does not model that allocator feature "
                f"of {name}"
            )
        chosen[gate] = value
    return SchedulerVersion(name, chosen, _variant(name, chosen))


def _version(text: str) -> str:
    wanted = text.strip().removeprefix("v")
    if not wanted:
        return DEFAULT_VERSION
    for name in VERSIONS:
        if name.removeprefix("v") == wanted or name.removeprefix("v").startswith(wanted + "."):
            return name
    choices = ", ".join(VERSIONS)
    raise GateError(f"--kubernetes-version: {text!r} is not one simulate decides as ({choices})")


def _variant(version: str, gates: Mapping[str, bool]) -> str:
    features = {
        "AdminAccess": gates["DRAAdminAccess"],
        "PrioritizedList": gates["DRAPrioritizedList"],
        "Partitionable": gates["DRAPartitionableDevices"],
        "Taints": gates["DRADeviceTaints"],
        "ConsumableCapacity": gates["DRAConsumableCapacity"],
    }
    binding, status = gates["DRADeviceBindingConditions"], gates["DRAResourceClaimDeviceStatus"]
    if version == V134:
        features |= {"DeviceBinding": binding, "DeviceStatus": status}
    else:
        features["DeviceBindingAndStatus"] = binding and status
    if version == V137:  # v1.37.2 dynamicresources.go AllocatorFeatures
        features |= {
            "FractionalCapacityRange": gates["DRAFractionalCapacityRange"],
            "ListTypeAttributes": gates["DRAListTypeAttributes"],
            "OptionalNodeOperations": gates["DRAOptionalNodeOperations"],
            "DerivedAttributes": gates["DRADerivedAttributes"],
            "CompatibilityGroups": gates["DRADeviceCompatibilityGroups"],
        }
    wanted = {name for name, on in features.items() if on}
    for variant, supported in VARIANTS[version]:
        if wanted <= supported:
            return variant
    raise GateError(f"no allocator of {version} supports {sorted(wanted)}")  # as upstream


def parse_gates(text: str) -> dict[str, bool]:
    """`Name=true,Other=false` as kube-scheduler's --feature-gates takes it."""
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or value.strip().lower() not in ("true", "false"):
            raise GateError(f"--feature-gates: {item!r} is not Name=true or Name=false")
        gates[name.strip()] = value.strip().lower() == "true"
    return gates
