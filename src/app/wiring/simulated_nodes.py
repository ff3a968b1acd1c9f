"""One simulated node's plugin graph: its fake hardware, the publisher it runs from the start,
and its node container (preparer, CDI and checkpoint stores), built when a pod lands there."""

from typing import TYPE_CHECKING

from npu_dra.app.options import Hardware, Settings

if TYPE_CHECKING:
    from npu_dra.adapters.simulation_files.scenario import Scenario
    from npu_dra.app.container import Container
    from npu_dra.app.services.inventory import InventoryCache
    from npu_dra.app.services.publisher import PoolPublisher
    from npu_dra.app.simulation.node_plugins import NodePlugin


def node_plugin(
    root: "Container", scenario: "Scenario", index: int, base: Settings
) -> "NodePlugin":
    """The node's publisher now; its full plugin container (preparer, CDI and checkpoint
    stores) only when a pod lands there, since wiring one costs milliseconds per node."""
    from npu_dra.adapters.hardware.nvml.fake import is_gpu_description
    from npu_dra.adapters.hardware.vnpu_probe import vnpu_probe_if_described
    from npu_dra.app.container import node_container
    from npu_dra.app.services.inventory import InventoryCache
    from npu_dra.app.simulation.node_plugins import NodePlugin, NodeServices
    from npu_dra.app.wiring.hardware import hardware_probe
    from npu_dra.domain.ids import DriverName

    name, hardware, sharing = scenario.nodes[index]
    # An NVIDIA node's devices belong to the GPU profile and its driver; --driver-name names
    # the Ascend nodes' driver.
    gpu = is_gpu_description(hardware)
    settings = base.derive(
        node_name=name,
        device_profile="gpu" if gpu else "npu",
        driver_name="" if gpu else base.driver_name,
        hardware=Hardware("fake", description=dict(hardware)),
        cdi_root=base.cdi_root / name,
        plugins_dir=base.plugins_dir / name,
        vnpu="templates" if hardware.get("vnpu") else "none",
        **sharing.settings(),
    )
    layout = root.cluster().partitionable_layout(node=name, driver=DriverName(base.driver_name))
    inventory = InventoryCache(vnpu_probe_if_described(hardware_probe(settings), layout))
    publisher = _publisher(root, settings, inventory)

    def build() -> NodeServices:
        node = node_container(root, settings)
        return NodeServices(node.preparer(), node.cdi_store())

    return NodePlugin(name, publisher, build, inventory)


def _publisher(
    root: "Container", settings: Settings, inventory: "InventoryCache"
) -> "PoolPublisher":
    """As the plugin publishes: unhealthy devices tainted where the server keeps taints (the
    simulated version's DRADeviceTaints), else left out; chips shared as the node's sharedChips
    (or --shared-chips) say, multi-allocatable where DRAConsumableCapacity is on."""
    from npu_dra.app.services.device_taints import TaintMode
    from npu_dra.app.services.publisher import PoolPublisher
    from npu_dra.app.wiring.node import sharing_mode
    from npu_dra.domain.device_taints import parse_taint_policy
    from npu_dra.domain.ids import DriverName

    driver = DriverName(settings.driver_name)
    taints = None
    if settings.simulated is not None and settings.simulated.on("DRADeviceTaints"):
        policy = parse_taint_policy(settings.taint_effects)
        taints = TaintMode(policy=policy, support=root.cluster(), driver=driver)
    sharing = sharing_mode(settings, root.cluster())
    return PoolPublisher(
        inventory=inventory, cluster=root.cluster(), driver=driver, taints=taints, sharing=sharing
    )
