"""Which selector environment the API server of the simulated version builds for a new selector.

A v1.34.3 API server compiles a new selector at compatibility version 1.33, a v1.36.3 one at 1.35
(k8s.io/apiserver pkg/cel/environment/base.go, DefaultCompatibilityVersion: the binary's minor
version less one), so cel-go's lists extension, introduced at 1.34, is there for 1.36 only. Two
DRA gates change `device` (k8s.io/kubernetes pkg/apis/resource/validation/validation.go passes
them to dynamic-resource-allocation cel/compile.go): DRAConsumableCapacity adds the field
`allowMultipleAllocations`; DRAListTypeAttributes (1.36) types attribute values `dyn` instead of
`google.protobuf.Any`, lets a selector evaluate to `dyn`, and adds `includes`.
"""

import attrs

from npu_dra.domain.scheduling.versions import V134, SchedulerVersion


@attrs.frozen
class Compatibility:
    lists_extension: bool = False
    consumable_capacity: bool = False
    list_type_attributes: bool = False


DEFAULT = Compatibility()  # v1.34.3's, with its default gates


def compatibility(simulated: SchedulerVersion) -> Compatibility:
    """The environment of the API server beside the kube-scheduler simulate decides as."""
    newer = simulated.version != V134
    return Compatibility(
        lists_extension=newer,
        consumable_capacity=simulated.on("DRAConsumableCapacity"),
        list_type_attributes=newer and simulated.on("DRAListTypeAttributes"),
    )
