"""Device profiles: what differs between vendors behind the same ports (`--device-profile`).

A profile owns its driver-name default, how devices are named, the attributes and capacities
they publish, each device's node and the shared device nodes containers need (per chip family,
with the ones a node cannot work without), the env var that tells the vendor runtime which
devices it sees, env that goes with mounted driver files, the classic resource prefix and the
real `--hardware` backend that finds its devices (the one rule both the options and the hardware
adapter check a backend against), and which runtime ids a container's devices get
(`RUNTIME_IDS`, below). The rest of the domain reads devices only through a profile, so
a new vendor adds a profile (and a hardware adapter), not new code paths.
"""

from collections.abc import Callable, Mapping, Sequence

import attrs

from npu_dra.domain.attributes import AttributeValue
from npu_dra.domain.device import Device
from npu_dra.domain.published_attributes import ascend_attributes, ascend_capacity, gpu_attributes
from npu_dra.domain.quantity import Quantity

# Which ids an Ascend container's software sees, for a container whose /dev/davinci<N> nodes
# come from our CDI spec (the host's N, never renumbered in /dev):
# - ASCEND_VISIBLE_DEVICES holds host physical ids (vNPU ids for vNPUs): the Ascend Docker
#   Runtime's input (mind-cluster component/ascend-docker-runtime; ascend-facts B.3/B.4, which
#   Huawei's device plugin sets the same way). Where that runtime is in play it mounts the same
#   /dev/davinci<N> our spec does. We set it always, ascending.
# - Inside a container the driver numbers the chips it was given 0..N-1 in ascending host
#   order, CANN's "logical device ids" (hiascend.com, CANN runtime API reference,
#   aclrtGetUserDevIdByLogicDevId, "Relationships Between the User Device ID, Logical Device
#   ID, and Physical Device ID": in a container, logical id 1 maps to physical id 6;
#   vllm-ascend PR #16256: host devices 3,4,5,6,7 are numbered 0..4 inside the container;
#   gpustack issue #3352: ASCEND_RT_VISIBLE_DEVICES=4 in a two-chip container fails with
#   "input data rang[0-2)").
# - ASCEND_RT_VISIBLE_DEVICES filters those logical ids, ascending only; unset, every device of
#   the container is visible and the user id equals the logical id (hiascend.com CANN envref
#   ASCEND_RT_VISIBLE_DEVICES, 8.0 and 8.5; a "trial" variable there). So host ids in it are
#   wrong in a container, and 0..N-1 means the same as leaving it unset.
# Default `unset` (what the CANN docs support). `container` sets it to 0..N-1 for frameworks that
# want it set (HAMi issue #1894, vllm-ascend issues #6942/#9428: TP over chips 3 and 4 worked
# once it was set); vllm-ascend PR #12959 reports container-local ids in it breaking A5 endpoint
# selection, so it is an option, not the default.
RUNTIME_IDS_UNSET = "unset"
RUNTIME_IDS_CONTAINER = "container"
RUNTIME_IDS = (RUNTIME_IDS_UNSET, RUNTIME_IDS_CONTAINER)


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
    default_driver: str  # the DRA driver name when --driver-name is not given
    cdi_class: str
    visible_devices_env: str
    resource_prefix: str  # classic device plugin: "<prefix>/<family>"
    node_prefix: str  # a device's node is /dev/<node_prefix><physical id>
    family_of: Callable[[str], str]  # chip name -> family (classic resource, node rules)
    device_name: Callable[[Device], str]  # the stable name a backend must give a device
    attributes: Callable[[Device], dict[str, AttributeValue]]
    capacity: Callable[[Device], dict[str, Quantity]]
    memory_capacity: str  # which capacity holds the device memory
    visible_id: Callable[[Device], str]  # one entry of visible_devices_env
    real_backend: str  # the `--hardware` backend that finds this profile's devices
    default_backend: str  # what an empty `--hardware` means (auto: the best that works here)
    other_backends: tuple[str, ...] = ()  # other real backends that find them too (dcmi)
    shared_nodes: tuple[SharedNode, ...] = ()
    env_with_mount: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    runtime_ids_env: str | None = None  # the vendor runtime's own device filter, if any
    runtime_ids: str = RUNTIME_IDS_UNSET  # what runtime_ids_env gets: one of RUNTIME_IDS

    def device_node_name(self, physical_id: int) -> str:
        return f"{self.node_prefix}{physical_id}"

    def visible_env(self, host_ids: Sequence[str]) -> tuple[str, ...]:
        """The env telling a container's software which devices it has, for devices whose
        ids on the host (physical or vNPU ids, or uuids) are `host_ids`, already in the order
        the container numbers them (ascending)."""
        env = [f"{self.visible_devices_env}={','.join(host_ids)}"]
        if self.runtime_ids_env is not None and self.runtime_ids == RUNTIME_IDS_CONTAINER:
            env.append(f"{self.runtime_ids_env}={','.join(map(str, range(len(host_ids))))}")
        return tuple(env)


def with_runtime_ids(profile: DeviceProfile, mode: str) -> DeviceProfile:
    """`profile` with `--runtime-visible-devices` applied (ValueError naming the flag for a
    mode it does not know)."""
    if mode not in RUNTIME_IDS:
        raise ValueError(
            f"--runtime-visible-devices {mode!r}: expected one of {', '.join(RUNTIME_IDS)}"
        )
    return attrs.evolve(profile, runtime_ids=mode)


def chip_family(chip_name: str) -> str:
    """Extended-resource family of a chip: 910B4 -> Ascend910, 310P3 -> Ascend310P. An A3
    node's npu-smi names its chips `Ascend910` (ascend-facts A.2): the prefix is not doubled."""
    bare = chip_name.removeprefix("Ascend")
    for family in ("310P", "310B", "910", "950", "310"):
        if bare.startswith(family):
            return f"Ascend{family}"
    return f"Ascend{bare}"


_310B = frozenset({"Ascend310B"})
_950 = frozenset({"Ascend950"})
ASCEND_DRIVER_LIB64 = "/usr/local/Ascend/driver/lib64"
NVIDIA_LIB_DIR = "/usr/local/nvidia/lib64"  # where the GPU profile mounts the driver libraries

# ascend-facts B.1: davinci_manager always (fatal without); devmm_svm and hisi_hdc on all but
# 310B (950 keeps only hisi_hdc); dvpp_cmdlist where present (not on 950).
ASCEND_NPU = DeviceProfile(
    name="npu",
    default_driver="npu.huawei.com",
    cdi_class="npu",
    visible_devices_env="ASCEND_VISIBLE_DEVICES",
    runtime_ids_env="ASCEND_RT_VISIBLE_DEVICES",
    resource_prefix="huawei.com",
    node_prefix="davinci",
    family_of=chip_family,
    device_name=lambda d: f"npu-{d.physical_id}",
    attributes=ascend_attributes,
    capacity=ascend_capacity,
    memory_capacity="memCapacity",
    visible_id=lambda d: str(d.physical_id),
    real_backend="npu-smi",
    default_backend="auto",
    other_backends=("dcmi",),
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

# `gpu.nvidia.com` is NVIDIA's own DRA driver: two drivers of one name on a node would share a
# kubelet registration, a plugin directory and ResourceSlice pools, and fight over them. Ours is
# named under the project's own domain, so both can run side by side (on different GPUs).
GPU_DRIVER = "gpu.npu-dra.io"

# NVIDIA GPUs: /dev/nvidia<minor> each; nvidiactl always; the UVM nodes (CUDA's unified memory)
# and modeset where present. Libraries go to one directory put on LD_LIBRARY_PATH.
NVIDIA_GPU = DeviceProfile(
    name="gpu",
    default_driver=GPU_DRIVER,
    cdi_class="gpu",
    visible_devices_env="NVIDIA_VISIBLE_DEVICES",
    resource_prefix="nvidia.com",
    node_prefix="nvidia",
    family_of=lambda _: "gpu",
    device_name=lambda d: f"gpu-{d.logic_id}",
    attributes=gpu_attributes,
    capacity=lambda d: {"memory": Quantity.of_bytes(d.memory_bytes)},
    memory_capacity="memory",
    visible_id=lambda d: d.uuid or str(d.logic_id),
    real_backend="nvml",
    default_backend="nvml",
    shared_nodes=(
        SharedNode("nvidiactl", required=True),
        SharedNode("nvidia-uvm"),
        SharedNode("nvidia-uvm-tools"),
        SharedNode("nvidia-modeset"),
    ),
    env_with_mount={NVIDIA_LIB_DIR: (f"LD_LIBRARY_PATH={NVIDIA_LIB_DIR}",)},
)

PROFILES: dict[str, DeviceProfile] = {p.name: p for p in (ASCEND_NPU, NVIDIA_GPU)}


def profile_named(name: str) -> DeviceProfile:
    """The profile `--device-profile` names, or ValueError listing the known ones."""
    if name not in PROFILES:
        raise ValueError(f"--device-profile {name!r}: known profiles are {', '.join(PROFILES)}")
    return PROFILES[name]


def node_profile(name: str, runtime_visible_devices: str) -> DeviceProfile:
    """`--device-profile` with `--runtime-visible-devices` applied: what both plugins' CDI
    content and Allocate answers are computed with."""
    return with_runtime_ids(profile_named(name), runtime_visible_devices)


def backend_mismatch(backend: str, profile: str) -> str | None:
    """Why the real `backend` (`npu-smi`, also spelled `npu_smi`, `dcmi` or `nvml`) cannot
    serve `profile`, or None when it can or is no real backend (`auto`, which picks among the
    profile's own, or a fake node description).

    A real backend finds one vendor's devices; under another profile they would get that
    profile's names, attributes and CDI content (a GPU handed /dev/davinci0).
    """
    spelled = backend.replace("_", "-")
    served = next(
        (p.name for p in PROFILES.values() if spelled in (p.real_backend, *p.other_backends)),
        None,
    )
    if served is None or served == profile:
        return None
    return (
        f"--hardware {spelled} finds {served} devices, not {profile}: "
        f"give --device-profile={served}"
    )
