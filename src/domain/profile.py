"""Device profiles: what differs between accelerator families behind the same ports.

A profile names the CDI class, each device's node, the shared device nodes containers need (per
chip family, with the ones a node cannot work without), the env var that tells the vendor
runtime which devices it sees, env that goes with mounted driver files, and the classic
resource prefix. New families add a profile, not new code paths.
"""

from collections.abc import Callable, Mapping

import attrs


@attrs.frozen
class SharedNode:
    """A device node every container of some chip families needs.

    `name` is the node under /dev in the container; `host_names` are its names on the host,
    the first present one wins (310B hosts call their manager `davinci_manager_docker`).
    `only`/`not_for` restrict it to chip families; `required` makes its absence an error.
    """

    name: str
    host_names: tuple[str, ...] = ()
    only: frozenset[str] | None = None
    not_for: frozenset[str] = frozenset()
    required: bool = False

    def applies_to(self, family: str) -> bool:
        return family not in self.not_for and (self.only is None or family in self.only)

    def candidates(self) -> tuple[str, ...]:
        return self.host_names or (self.name,)


@attrs.frozen
class DeviceProfile:
    name: str
    cdi_class: str
    visible_devices_env: str
    resource_prefix: str  # classic device plugin: "<prefix>/<family>"
    node_prefix: str  # a device's node is /dev/<node_prefix><physical id>
    family_of: Callable[[str], str]  # chip name -> family (classic resource, node rules)
    shared_nodes: tuple[SharedNode, ...] = ()
    env_with_mount: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)

    def device_node_name(self, physical_id: int) -> str:
        return f"{self.node_prefix}{physical_id}"


def chip_family(chip_name: str) -> str:
    """Extended-resource family of a chip: 910B4 -> Ascend910, 310P3 -> Ascend310P."""
    for family in ("310P", "310B", "910", "950", "310"):
        if chip_name.startswith(family):
            return f"Ascend{family}"
    return f"Ascend{chip_name}"


_310B = frozenset({"Ascend310B"})
_950 = frozenset({"Ascend950"})
ASCEND_DRIVER_LIB64 = "/usr/local/Ascend/driver/lib64"

# ascend-facts B.1: davinci_manager always (fatal without); devmm_svm and hisi_hdc on all but
# 310B (950 keeps only hisi_hdc); dvpp_cmdlist where present (not on 950).
ASCEND_NPU = DeviceProfile(
    name="npu",
    cdi_class="npu",
    visible_devices_env="ASCEND_VISIBLE_DEVICES",
    resource_prefix="huawei.com",
    node_prefix="davinci",
    family_of=chip_family,
    shared_nodes=(
        SharedNode(
            "davinci_manager", ("davinci_manager_docker", "davinci_manager"), _310B, required=True
        ),
        SharedNode("davinci_manager", not_for=_310B, required=True),
        SharedNode("devmm_svm", not_for=_310B | _950),
        SharedNode("hisi_hdc", not_for=_310B),
        SharedNode("dvpp_cmdlist", not_for=_950),
    ),
    # ascend-facts B.2: the runtime prepends these when it mounts the driver's libraries.
    env_with_mount={
        ASCEND_DRIVER_LIB64: (
            f"LD_LIBRARY_PATH={ASCEND_DRIVER_LIB64}/common:{ASCEND_DRIVER_LIB64}/driver",
        )
    },
)

PROFILES: dict[str, DeviceProfile] = {p.name: p for p in (ASCEND_NPU,)}


def profile_named(name: str) -> DeviceProfile:
    """The profile `--device-profile` names, or ValueError listing the known ones."""
    if name not in PROFILES:
        raise ValueError(f"--device-profile {name!r}: known profiles are {', '.join(PROFILES)}")
    return PROFILES[name]
