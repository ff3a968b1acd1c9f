"""CdiSpec <-> the CDI JSON document, and the claim UID rule that keeps file names safe.

The runtime's CDI library decodes strictly and refuses a spec whose declared `cdiVersion` is
older than its content needs, so the encoder checks the loading rules up front and declares the
minimum version the content requires (never a field newer than the declared version). Decoding
is equally strict: a field this codec cannot represent is an error rather than silently lost.
"""

import re
from typing import Any

from npu_dra.domain.cdi import CdiDevice, CdiSpec, ContainerEdits, DeviceNode, Mount
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace

KNOWN_VERSIONS = (
    "0.1.0",
    "0.2.0",
    "0.3.0",
    "0.4.0",
    "0.5.0",
    "0.6.0",
    "0.7.0",
    "0.8.0",
    "1.0.0",
    "1.1.0",
)
_NAME = r"[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?"
_KIND = re.compile(rf"^{_NAME}/{_NAME}$")
_DEVICE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")

Json = dict[str, Any]
# The most bytes of a spec file read: ours are a few kB (a claim of 32 devices, the API's most,
# encodes to about 5 kB), so anything larger at one of our names is not ours and is never read.
MAX_SPEC_BYTES = 1 << 20


class InvalidCdiSpec(ValueError):
    """A spec breaks the CDI loading rules, so a runtime would refuse it."""


def check_uid(uid: str) -> ClaimUID:
    """The ClaimRef UID rule (letters, digits, '-', at most 63), which makes a UID path-safe."""
    ClaimRef(Namespace("uid-check"), ClaimName("uid-check"), ClaimUID(uid))
    return ClaimUID(uid)


def required_version(spec: CdiSpec) -> str:
    """The version the content needs: a dotted class 0.6.0; digit-led device names or a device
    node's hostPath 0.5.0; plain env, device nodes and mounts 0.3.0."""
    if "." in spec.kind.partition("/")[2]:
        return "0.6.0"
    if any(not d.name[:1].isalpha() for d in spec.devices):
        return "0.5.0"
    edits = (spec.edits, *(d.edits for d in spec.devices))
    if any(n.host_path for e in edits for n in e.device_nodes):
        return "0.5.0"
    return "0.3.0"


def encode(spec: CdiSpec) -> Json:
    _check(spec)
    needed = required_version(spec)
    version = needed if _older(spec.version, needed) else spec.version
    doc: Json = {
        "cdiVersion": version,
        "kind": spec.kind,
        "devices": [{"name": d.name, "containerEdits": _edits(d.edits)} for d in spec.devices],
    }
    if edits := _edits(spec.edits):
        doc["containerEdits"] = edits
    return doc


def decode(doc: object) -> CdiSpec:
    top = _fields(doc, "spec", {"cdiVersion", "kind", "devices"}, {"containerEdits"})
    devices = tuple(
        CdiDevice(_str(d, "name"), _decode_edits(d.get("containerEdits", {})))
        for d in (_fields(x, "device", {"name"}, {"containerEdits"}) for x in _list(top["devices"]))
    )
    spec = CdiSpec(
        kind=_str(top, "kind"),
        devices=devices,
        edits=_decode_edits(top.get("containerEdits", {})),
        version=_str(top, "cdiVersion"),
    )
    _check(spec)
    if _older(spec.version, needed := required_version(spec)):
        raise InvalidCdiSpec(
            f"cdiVersion {spec.version} is older than its content needs ({needed})"
        )
    return spec


def _older(version: str, than: str) -> bool:
    return KNOWN_VERSIONS.index(version) < KNOWN_VERSIONS.index(than)


def _check(spec: CdiSpec) -> None:
    if spec.version not in KNOWN_VERSIONS:
        raise InvalidCdiSpec(f"unknown cdiVersion {spec.version!r}")
    if not _KIND.match(spec.kind):
        raise InvalidCdiSpec(f"kind {spec.kind!r} is not vendor/class")
    if not spec.devices:
        raise InvalidCdiSpec("a spec needs at least one device")
    names = [d.name for d in spec.devices]
    if len(set(names)) != len(names):
        raise InvalidCdiSpec(f"device names are not unique: {names}")
    for device in spec.devices:
        if not _DEVICE.match(device.name):
            raise InvalidCdiSpec(f"device name {device.name!r} breaks the CDI naming rules")
        if not _edits(device.edits):
            raise InvalidCdiSpec(f"device {device.name!r} has empty containerEdits")
    for edits in (spec.edits, *(d.edits for d in spec.devices)):
        if bad := [e for e in edits.env if "=" not in e]:
            raise InvalidCdiSpec(f"env entries are not KEY=VALUE: {bad}")
        if any(not n.path or n.host_path == "" for n in edits.device_nodes):
            raise InvalidCdiSpec("a device node has an empty path or hostPath")
        if any(not m.host_path or not m.container_path for m in edits.mounts):
            raise InvalidCdiSpec("a mount has an empty hostPath or containerPath")


def _edits(edits: ContainerEdits) -> Json:
    doc: Json = {}
    if edits.env:
        doc["env"] = list(edits.env)
    if edits.device_nodes:
        doc["deviceNodes"] = [_device_node(n) for n in edits.device_nodes]
    if edits.mounts:
        doc["mounts"] = [_mount(m) for m in edits.mounts]
    return doc


def _device_node(node: DeviceNode) -> Json:
    doc: Json = {"path": node.path}
    if node.host_path:
        doc["hostPath"] = node.host_path
    return doc


def _mount(mount: Mount) -> Json:
    doc: Json = {"hostPath": mount.host_path, "containerPath": mount.container_path}
    if mount.options:
        doc["options"] = list(mount.options)
    return doc


def _decode_edits(doc: object) -> ContainerEdits:
    edits = _fields(doc, "containerEdits", set(), {"env", "deviceNodes", "mounts"})
    nodes = [
        _fields(n, "deviceNode", {"path"}, {"hostPath"})
        for n in _list(edits.get("deviceNodes", []))
    ]
    mounts = [
        _fields(m, "mount", {"hostPath", "containerPath"}, {"options"})
        for m in _list(edits.get("mounts", []))
    ]
    return ContainerEdits(
        env=_strs(edits.get("env", []), "env"),
        device_nodes=tuple(
            DeviceNode(_str(n, "path"), _str(n, "hostPath") if "hostPath" in n else None)
            for n in nodes
        ),
        mounts=tuple(
            Mount(
                _str(m, "hostPath"),
                _str(m, "containerPath"),
                _strs(m.get("options", []), "options"),
            )
            for m in mounts
        ),
    )


def _fields(doc: object, what: str, required: set[str], optional: set[str]) -> Json:
    if not isinstance(doc, dict):
        raise InvalidCdiSpec(f"{what} is not an object")
    if missing := required - doc.keys():
        raise InvalidCdiSpec(f"{what} lacks {sorted(missing)}")
    if unknown := doc.keys() - required - optional:
        raise InvalidCdiSpec(f"{what} has unsupported fields {sorted(unknown)}")
    return doc


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidCdiSpec(f"expected a list, got {type(value).__name__}")
    return value


def _str(doc: Json, key: str) -> str:
    value = doc[key]
    if not isinstance(value, str):
        raise InvalidCdiSpec(f"{key} is not a string")
    return value


def _strs(value: object, what: str) -> tuple[str, ...]:
    items = _list(value)
    if not all(isinstance(i, str) for i in items):
        raise InvalidCdiSpec(f"{what} holds a non-string")
    return tuple(items)
