"""The kinds of device a driver publishes, the `type` attribute that names each, and the
DeviceClass that selects each kind, so a claim for a whole chip never gets a share or a vNPU.

NVIDIA's DRA driver does the same for the same reason: a `type` attribute (`gpu`, `mig`, ...)
and one class per kind (`gpu.nvidia.com`, `mig.nvidia.com`; k8s-dra-driver-gpu
deployments/helm/nvidia-dra-driver-gpu/templates/deviceclass-*.yaml). Ours:

| kind  | `type`             | class            | what                                         |
|-------|--------------------|------------------|----------------------------------------------|
| whole | the profile's name | `<driver>`       | a whole chip; also a consumable-capacity chip |
| vnpu  | `vnpu`             | `vnpu.<driver>`  | a vNPU cut from a chip (Ascend only)          |
| share | `share`            | `share.<driver>` | a fixed share, or a consumable-capacity chip  |

A consumable-capacity chip is in two classes: a request through the whole-chip class that names
no capacity takes all of it (domain/chip_sharing/policy.py), one through the share class names its
part.

The seed's class keeps the driver's name and now selects whole chips only. Its expression also
takes devices an older npu-dra published without `type` (no `vnpuTemplate`, no `shareIndex`:
its whole and consumable chips), so a node not yet upgraded keeps serving whole-chip claims
during a rolling upgrade; the other classes key on attributes every version published.
"""

import attrs

TYPE_ATTRIBUTE = "type"
VNPU_TYPE = "vnpu"
SHARE_TYPE = "share"
# Attributes older versions published only on vNPUs and fixed shares (domain/vnpu/layout.py,
# domain/chip_sharing/policy.py: kept in step by tests/unit/test_device_kinds.py).
_VNPU_MARK = "vnpuTemplate"
_SHARE_MARKS = ("shareIndex", "shared")


@attrs.frozen
class DeviceKind:
    """`label`: how docs and messages call it; `prefix`: what goes before the driver name to
    make its class name ("" for whole chips: the class is the driver's name)."""

    label: str
    prefix: str

    def class_name(self, driver: str) -> str:
        return f"{self.prefix}.{driver}" if self.prefix else driver


WHOLE = DeviceKind("whole chip", "")
VNPU = DeviceKind("vNPU", "vnpu")
SHARE = DeviceKind("share", "share")


def kinds_of(profile: str) -> tuple[DeviceKind, ...]:
    """The kinds a profile publishes: vNPUs are Ascend's only."""
    return (WHOLE, VNPU, SHARE) if profile == "npu" else (WHOLE, SHARE)


def class_selector(kind: DeviceKind, *, driver: str, profile: str) -> str:
    """The CEL a DeviceClass of `kind` selects with (every map lookup guarded: a missing key
    would be a CEL error that fails the whole claim, not a device that does not match)."""
    a = f'device.attributes["{driver}"]'
    if kind == VNPU:
        kind_test = f'"{_VNPU_MARK}" in {a}'
    elif kind == SHARE:
        kind_test = f'"{_SHARE_MARKS[1]}" in {a}'
    else:
        older = f'!("{_VNPU_MARK}" in {a}) && !("{_SHARE_MARKS[0]}" in {a})'
        kind_test = f'("{TYPE_ATTRIBUTE}" in {a} ? {a}.{TYPE_ATTRIBUTE} == "{profile}" : {older})'
    return f'device.driver == "{driver}" && {kind_test}'
