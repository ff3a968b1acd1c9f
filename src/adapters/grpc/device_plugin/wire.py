"""Our values as kubelet v1beta1 messages: the one place that knows the protobuf shapes."""

from collections.abc import Iterable

from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.domain.device import Device
from npu_dra.domain.device_plugin_allocation import ContainerAllocation

VERSION = "v1beta1"
KUBELET_SOCKET = "kubelet.sock"
HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
DEVICE_PERMISSIONS = "rw"


def plugin_options() -> api.DevicePluginOptions:
    """Registered and answered alike: preferred allocation yes, PreStartContainer not needed."""
    return api.DevicePluginOptions(
        pre_start_required=False, get_preferred_allocation_available=True
    )


def device_list(devices: Iterable[Device]) -> api.ListAndWatchResponse:
    return api.ListAndWatchResponse(devices=[_device(d) for d in devices])


def _device(device: Device) -> api.Device:
    health = HEALTHY if device.health.usable else UNHEALTHY
    if device.numa_node is None:
        return api.Device(ID=device.name, health=health)
    topology = api.TopologyInfo(nodes=[api.NUMANode(ID=device.numa_node)])
    return api.Device(ID=device.name, health=health, topology=topology)


def container_response(allocation: ContainerAllocation) -> api.ContainerAllocateResponse:
    return api.ContainerAllocateResponse(
        envs=dict(allocation.envs),
        devices=[
            api.DeviceSpec(
                container_path=n.path, host_path=n.source, permissions=DEVICE_PERMISSIONS
            )
            for n in allocation.device_nodes
        ],
        mounts=[
            api.Mount(container_path=m.container_path, host_path=m.host_path, read_only=True)
            for m in allocation.mounts
        ],
        cdi_devices=[api.CDIDevice(name=n) for n in allocation.cdi_devices],
    )
