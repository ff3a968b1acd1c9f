"""The static CDI spec Allocate's CDI device names point at: one CDI device per NPU.

Unlike the DRA path's per-claim transient specs, the device plugin names devices, not claims, so
one spec holds every NPU of the node (all chip families share the CDI kind) and lasts as long as
the devices do. Its file name (`<vendor>-<class>.json`, CDI's static naming: domain/cdi.py's
`static_spec_file_name`) deliberately does not match the DRA store's `..._<claimUID>.json`
pattern, so a DRA plugin sharing the directory never mistakes it for a stale claim. Computed
here; written through the `StaticCdiSpecs` port.
"""

from collections.abc import Iterable, Sequence

import attrs

from npu_dra.domain.cdi import (
    CdiDevice,
    CdiSpec,
    Mount,
    device_edits,
    minimum_version,
    runtime_edits,
)
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.device_plugin_allocation import with_extra_mounts
from npu_dra.domain.profile import DeviceProfile


def static_spec(
    devices: Iterable[Device],
    *,
    kind: str,
    profile: DeviceProfile,
    mounts: Sequence[Mount],
    host: HostFiles,
) -> CdiSpec:
    """Per device its own node; the shared nodes, driver mounts and their env for any of them
    (the visible-devices env is per allocation: Allocate's answer sets it)."""
    ordered = sorted(devices, key=lambda d: d.physical_id)
    shared = runtime_edits(ordered, host=host, profile=profile)
    common = attrs.evolve(shared, mounts=with_extra_mounts(shared.mounts, mounts))
    per_device = tuple(
        CdiDevice(d.name, device_edits(d, host=host, profile=profile)) for d in ordered
    )
    spec = CdiSpec(kind, per_device, common)
    return attrs.evolve(spec, version=minimum_version(spec))
