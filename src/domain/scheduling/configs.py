"""The config entries kube-scheduler copies into an allocation (`status.allocation.devices.
config`), ported from Allocate() in k8s.io/dynamic-resource-allocation/structured v0.34.3
(internal/experimental/allocator_experimental.go, "Populate configs"; incubating and v0.36.3 alike).

First the class configs: for each request in claim order, the configs of the class of what was
allocated (the chosen subrequest's for a `firstAvailable` request), each once per class, naming
every request served from that class ("r" or "r/sub"). Then the claim's own: an entry for all
requests once; an entry naming requests once per request of the claim it names (directly, or
through the chosen subrequest), so an entry naming two requests is copied twice, as there.
"""

from collections.abc import Sequence

import attrs

from npu_dra.domain.claims import ConfigSource, OpaqueConfig, ResourceClaim
from npu_dra.domain.ids import DeviceClassName, RequestName
from npu_dra.domain.scheduling.request_data import RequestData


def allocation_config(
    claim: ResourceClaim, taken: Sequence[RequestData]
) -> tuple[OpaqueConfig, ...]:
    """`taken`: the request data of each device allocated to the claim, in any order."""
    if not claim.spec.config and not any(data.device_class.config for data in taken):
        return ()
    chosen: dict[str, RequestData] = {}
    for data in taken:
        chosen.setdefault(data.base, data)
    configs = _class_configs(claim, chosen)
    for config in claim.spec.config:
        copies = 1 if not config.requests else _named(config, claim, chosen)
        configs += [attrs.evolve(config, source=ConfigSource.CLAIM)] * copies
    return tuple(configs)


def _class_configs(claim: ResourceClaim, chosen: dict[str, RequestData]) -> list[OpaqueConfig]:
    configs: list[OpaqueConfig] = []
    spans: dict[DeviceClassName, range] = {}
    for request in claim.spec.requests:
        data = chosen.get(request.name)
        if data is None:  # never once allocated: every request takes at least one device
            continue
        name, device_class = RequestName(data.name), data.device_class
        if device_class.name in spans:
            for i in spans[device_class.name]:
                configs[i] = attrs.evolve(configs[i], requests=(*configs[i].requests, name))
            continue
        start = len(configs)
        configs += (
            attrs.evolve(c, source=ConfigSource.CLASS, requests=(name,))
            for c in device_class.config
        )
        spans[device_class.name] = range(start, len(configs))
    return configs


def _named(config: OpaqueConfig, claim: ResourceClaim, chosen: dict[str, RequestData]) -> int:
    """How many of the claim's requests `config` names, itself or its chosen subrequest."""
    count = 0
    for request in claim.spec.requests:
        data = chosen.get(request.name)
        sub = data.name if data is not None and data.sub else None
        if request.name in config.requests or (sub is not None and sub in config.requests):
            count += 1
    return count
