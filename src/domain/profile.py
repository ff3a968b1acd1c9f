"""Device profiles: what differs between accelerator families behind the same ports.

A profile names the CDI class, the shared device nodes every container needs, and the env var that
tells the vendor runtime which devices it sees. New families add a profile, not new code paths.
"""

import attrs


@attrs.frozen
class DeviceProfile:
    name: str
    cdi_class: str
    shared_device_nodes: tuple[str, ...]
    visible_devices_env: str
    resource_prefix: str  # classic device plugin: "<prefix>/<family>"


ASCEND_NPU = DeviceProfile(
    name="npu",
    cdi_class="npu",
    shared_device_nodes=("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"),
    visible_devices_env="ASCEND_VISIBLE_DEVICES",
    resource_prefix="huawei.com",
)

PROFILES: dict[str, DeviceProfile] = {p.name: p for p in (ASCEND_NPU,)}


def profile_named(name: str) -> DeviceProfile:
    """The profile `--device-profile` names, or ValueError listing the known ones."""
    if name not in PROFILES:
        raise ValueError(f"--device-profile {name!r}: known profiles are {', '.join(PROFILES)}")
    return PROFILES[name]


def chip_family(chip_name: str) -> str:
    """Extended-resource family of a chip: 910B4 -> Ascend910, 310P3 -> Ascend310P."""
    for family in ("310P", "310B", "910", "950", "310"):
        if chip_name.startswith(family):
            return f"Ascend{family}"
    return f"Ascend{chip_name}"
