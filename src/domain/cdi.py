"""CDI content for a prepared claim, computed without touching the filesystem.

One transient spec per claim; device names carry the claim UID because runtimes cache specs and
a name reused across claims could inject a stale device; a share of a chip's name also carries
its shareID or share device, and what it was given (`share_cdi_device_name`, #31). The version
written is the minimum the content needs (0.3.0 for env, device nodes and plain mounts; 0.5.0
for a device node whose host path differs, or a name starting with a digit), so older runtimes
accept it.

What a container gets is a pure function of its devices, the profile and the host's files as
the hardware adapter reported them (`HostFiles`): each device's node, the shared nodes its chip
families need and the host has, the driver files read-only, and the env that goes with them.
The DRA spec, the classic plugin's static spec and its Allocate answer are all built from
`device_edits` and `runtime_edits`, so the three cannot drift apart.

The naming rule lives here too, once: the kind (`k8s.<driver>/<class>`), a device's qualified
name (`<kind>=<device>`), and the spec file names the file adapters use: a claim's transient
spec is `<vendor>-<class>_<claimUID>.json` (the Go CDI library's transient name, the claim UID as
its ID), the device plugin's static spec `<vendor>-<class>.json`, which never matches the former.
"""

import re
from collections.abc import Iterable, Sequence

import attrs

from npu_dra.domain.chip_sharing.prepared import ChipUse, Share, sharing_env
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.errors import PrepareError
from npu_dra.domain.ids import ClaimUID, DeviceName, DriverName, RequestName
from npu_dra.domain.profile import DeviceProfile, SharedNode

CDI_VERSION = "0.3.0"
HOST_PATH_VERSION = "0.5.0"  # deviceNodes[].hostPath, and names starting with a digit
DIGIT_NAME_VERSION = HOST_PATH_VERSION
CONTAINER_DEV = "/dev"
SPEC_FILE_SUFFIX = ".json"
READ_ONLY = ("ro", "nosuid", "nodev", "bind")
_SHARE_TERMS = re.compile(r"(?:-mem(?P<memory>[0-9]{1,12}))?(?:-aic(?P<aicores>[0-9]{1,9}))?\Z")


@attrs.frozen
class DeviceNode:
    path: str  # in the container
    host_path: str | None = None  # None: the same path on the host

    @property
    def source(self) -> str:
        return self.host_path or self.path


@attrs.frozen
class Mount:
    host_path: str
    container_path: str
    options: tuple[str, ...] = READ_ONLY


@attrs.frozen
class ContainerEdits:
    env: tuple[str, ...] = ()
    device_nodes: tuple[DeviceNode, ...] = ()
    mounts: tuple[Mount, ...] = ()


@attrs.frozen
class CdiDevice:
    name: str
    edits: ContainerEdits


@attrs.frozen
class CdiSpec:
    kind: str
    devices: tuple[CdiDevice, ...]
    edits: ContainerEdits = ContainerEdits()
    version: str = CDI_VERSION

    def qualified_name(self, device: CdiDevice) -> str:
        return qualified_device_name(self.kind, device.name)

    def device_nodes(self) -> tuple[str, ...]:
        nodes = [n.path for n in self.edits.device_nodes]
        nodes += [n.path for d in self.devices for n in d.edits.device_nodes]
        return tuple(nodes)


def cdi_kind(driver: DriverName, profile: DeviceProfile) -> str:
    return class_kind(driver, profile.cdi_class)


def class_kind(driver: DriverName, cdi_class: str) -> str:
    """`k8s.<driver>/<class>`: our CDI vendor is the driver's name under `k8s.`."""
    return f"k8s.{driver}/{cdi_class}"


def qualified_device_name(kind: str, device_name: str) -> str:
    """`<kind>=<device>`: the name a runtime (and the kubelet's CDI ids) give a CDI device."""
    return f"{kind}={device_name}"


def claim_spec_prefix(kind: str) -> str:
    """`k8s.npu.huawei.com/npu` -> `k8s.npu.huawei.com-npu_`: what every claim spec file of
    this kind starts with (and, after a dot, its temp files)."""
    return f"{_file_stem(kind)}_"


def claim_spec_file_name(kind: str, uid: ClaimUID) -> str:
    return f"{claim_spec_prefix(kind)}{uid}{SPEC_FILE_SUFFIX}"


def claim_of_spec_file(kind: str, file_name: str) -> str | None:
    """The transient ID (claim UID, unchecked) a claim spec file of this kind is named for;
    None for any other file."""
    prefix = claim_spec_prefix(kind)
    if not (file_name.startswith(prefix) and file_name.endswith(SPEC_FILE_SUFFIX)):
        return None
    return file_name[len(prefix) : -len(SPEC_FILE_SUFFIX)] or None


def static_spec_file_name(kind: str) -> str:
    """`k8s.npu.huawei.com/npu` -> `k8s.npu.huawei.com-npu.json`."""
    return f"{_file_stem(kind)}{SPEC_FILE_SUFFIX}"


def cdi_device_name(uid: ClaimUID, device: DeviceName) -> str:
    """`<claimUID>-<device>`: a claim's CDI device, unique across claims on one node."""
    return f"{uid}-{device}"


def share_cdi_device_name(
    uid: ClaimUID, device: DeviceName, share_id: str | None, share: Share
) -> str:
    """`<claimUID>-<device>[-<shareID>]-mem<MiB>[-aic<cores>]` (a term left out where unknown):
    unique for each share a claim holds (two shares of one chip differ in shareID or in fixed
    share device), and the record of what the share was given, which restart repair reads back
    (`recorded_share`): the checkpoint keeps a device's CDI ids, not its consumed capacity."""
    terms = [] if share.memory_mib is None else [f"mem{share.memory_mib}"]
    terms += [] if share.aicores is None else [f"aic{share.aicores}"]
    return "-".join([uid, device, *([share_id] if share_id else []), *terms])


def recorded_share(name: str) -> Share:
    """What a share's CDI device name says it was given (`share_cdi_device_name`). Its device
    (npu-N, npu-N-share-I) and shareID (a UUID) never end in those terms."""
    found = _SHARE_TERMS.search(name)
    memory, aicores = (found["memory"], found["aicores"]) if found else (None, None)
    return Share(None if memory is None else int(memory), None if aicores is None else int(aicores))


def device_node(device: Device, *, host: HostFiles, profile: DeviceProfile) -> DeviceNode:
    """The device's own node: `/dev/davinci<phy>` in the container, under the dev root outside."""
    return _node(profile.device_node_name(device.physical_id), host.dev_root)


def device_edits(device: Device, *, host: HostFiles, profile: DeviceProfile) -> ContainerEdits:
    return ContainerEdits(device_nodes=(device_node(device, host=host, profile=profile),))


def visible_devices_env(devices: Iterable[Device], *, profile: DeviceProfile) -> tuple[str, ...]:
    """`ASCEND_VISIBLE_DEVICES=3,4` (physical ids, ascending: the order the container numbers
    them), with `ASCEND_RT_VISIBLE_DEVICES=0,1` where the profile's runtime ids ask for it
    (domain/profile.py says why); `NVIDIA_VISIBLE_DEVICES=GPU-...` (uuids)."""
    ordered = sorted({d.physical_id: d for d in devices}.values(), key=lambda d: d.physical_id)
    return profile.visible_env([profile.visible_id(d) for d in ordered])


def runtime_edits(
    devices: Iterable[Device], *, host: HostFiles, profile: DeviceProfile
) -> ContainerEdits:
    """What any container with these devices needs besides their own nodes: the shared nodes
    of their chip families that the host has (PrepareError if a required one is missing), the
    host's driver files read-only, and the env the profile ties to those files."""
    families = sorted({profile.family_of(d.chip_name) for d in devices})
    rules = [r for r in profile.shared_nodes if any(r.applies_to(f) for f in families)]
    nodes: dict[str, DeviceNode] = {}
    for rule in rules:
        if rule.name not in nodes and (node := _shared_node(rule, host, families)) is not None:
            nodes[rule.name] = node
    mounts = tuple(
        Mount(f.host_path, f.container_path)
        for f in sorted(host.driver_files, key=lambda f: f.container_path)
    )
    env = tuple(
        e
        for under, values in profile.env_with_mount.items()
        if any(_under(m.container_path, under) for m in mounts)
        for e in values
    )
    return ContainerEdits(env=env, device_nodes=tuple(nodes.values()), mounts=mounts)


def claim_cdi_spec(
    uid: ClaimUID,
    devices: Sequence[Device],
    *,
    driver: DriverName,
    profile: DeviceProfile,
    host: HostFiles,
) -> CdiSpec:
    """The spec of a claim holding whole chips, each its own (`chip_use_spec`)."""
    uses = [ChipUse(d, cdi_device_name(uid, d.name), RequestName("")) for d in devices]
    return chip_use_spec(uses, driver=driver, profile=profile, host=host)


def chip_use_spec(
    uses: Sequence[ChipUse], *, driver: DriverName, profile: DeviceProfile, host: HostFiles
) -> CdiSpec:
    """Per allocated device its chip's node and its sharing env (domain/chip_sharing/prepared.py);
    the
    shared nodes, mounts and env (visible devices too, each chip once) once."""
    ordered = sorted(
        {u.cdi_name: u for u in uses}.values(), key=lambda u: (u.chip.physical_id, u.cdi_name)
    )
    chips = list({u.chip.name: u.chip for u in ordered}.values())
    shared = runtime_edits(chips, host=host, profile=profile)
    common = attrs.evolve(shared, env=(*visible_devices_env(chips, profile=profile), *shared.env))
    env = sharing_env(ordered)
    cdi_devices = tuple(
        CdiDevice(
            u.cdi_name,
            attrs.evolve(device_edits(u.chip, host=host, profile=profile), env=env[u.cdi_name]),
        )
        for u in ordered
    )
    spec = CdiSpec(cdi_kind(driver, profile), cdi_devices, common)
    return attrs.evolve(spec, version=minimum_version(spec))


def minimum_version(spec: CdiSpec) -> str:
    """The oldest CDI version that accepts this content (claim UIDs often start with a digit)."""
    edits = (spec.edits, *(d.edits for d in spec.devices))
    host_paths = any(n.host_path for e in edits for n in e.device_nodes)
    digit_names = any(d.name[:1].isdigit() for d in spec.devices)
    return HOST_PATH_VERSION if host_paths or digit_names else CDI_VERSION


def _shared_node(rule: SharedNode, host: HostFiles, families: list[str]) -> DeviceNode | None:
    present = next((n for n in rule.candidates() if n in host.device_nodes), None)
    if present is not None:
        return _node(rule.name, host.dev_root, host_name=present)
    if rule.required:
        raise PrepareError(
            f"{host.dev_root}/{' or '.join(rule.candidates())} is missing on this node, "
            f"and {'/'.join(families)} containers need it"
        )
    return None


def _file_stem(kind: str) -> str:
    """CDI's `<vendor>-<class>` file name stem of a `<vendor>/<class>` kind."""
    return kind.replace("/", "-")


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _node(name: str, dev_root: str, *, host_name: str | None = None) -> DeviceNode:
    path = f"{CONTAINER_DEV}/{name}"
    source = f"{dev_root.rstrip('/') or ''}/{host_name or name}"
    return DeviceNode(path, None if source == path else source)
