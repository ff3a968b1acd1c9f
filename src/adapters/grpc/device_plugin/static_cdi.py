"""The static CDI spec Allocate's CDI device names point at: one CDI device per NPU.

Unlike the DRA path's per-claim transient specs, the device plugin names devices, not claims, so
one spec holds every NPU of the node (all chip families share the CDI kind) and lasts as long as
the devices do. Its file name (`<vendor>-<class>.json`, CDI's static naming) deliberately does
not match the DRA store's `..._<claimUID>.json` pattern, so a DRA plugin sharing the directory
never mistakes it for a stale claim. Written atomically: a runtime may read it at any moment.
"""

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from npu_dra.adapters.cdi.codec import encode
from npu_dra.adapters.grpc.device_plugin.allocate import DriverMount, with_extra_mounts
from npu_dra.domain.cdi import CdiDevice, CdiSpec, device_edits, minimum_version, runtime_edits
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.profile import DeviceProfile

SPEC_MODE = 0o644


def static_spec(
    devices: Iterable[Device],
    *,
    kind: str,
    profile: DeviceProfile,
    mounts: Sequence[DriverMount],
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


def spec_file_name(kind: str) -> str:
    """`k8s.npu.huawei.com/npu` -> `k8s.npu.huawei.com-npu.json`."""
    return kind.replace("/", "-") + ".json"


def write_static_spec(root: Path, spec: CdiSpec) -> Path:
    """Create or replace the spec file of `spec.kind` in `root`: temp file, fsync, rename."""
    path = root / spec_file_name(spec.kind)
    data = json.dumps(encode(spec), indent=2).encode() + b"\n"
    root.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".spec.", suffix=".tmp", dir=root)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            os.fchmod(out.fileno(), SPEC_MODE)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
