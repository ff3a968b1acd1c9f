"""ctypes mirrors of the two DCMI structures that say where an NPU sits on the network.

Layouts from Huawei's public header, github.com/Ascend/mind-cluster (22bb3d98)
component/ascend-common/devmanager/dcmi/dcmi_interface_api.h: `struct dcmi_ip_addr` (a 16-byte
union of ip6/ip4, then `enum dcmi_ip_addr_type`: 0 IPv4, 1 IPv6) and `struct dcmi_spod_info`
(sdid, scale_type, super_pod_id, server_id, chassis_id, super_pod_type, reserve[6]; A3 SuperPoD
nodes). tests/unit/dcmi/test_struct_layout.py checks them against tests/support/dcmi_stub.
"""

import ctypes

IPV4, IPV6 = 0, 1


class IpAddrUnion(ctypes.Union):
    _fields_ = (("ip6", ctypes.c_ubyte * 16), ("ip4", ctypes.c_ubyte * 4))


class IpAddr(ctypes.Structure):
    """struct dcmi_ip_addr."""

    _fields_ = (("u_addr", IpAddrUnion), ("ip_type", ctypes.c_int))


class SpodInfo(ctypes.Structure):
    """struct dcmi_spod_info."""

    _fields_ = (
        ("sdid", ctypes.c_uint),
        ("scale_type", ctypes.c_uint),
        ("super_pod_id", ctypes.c_uint),
        ("server_id", ctypes.c_uint),
        ("chassis_id", ctypes.c_uint),
        ("super_pod_type", ctypes.c_uint),
        ("reserve", ctypes.c_uint * 6),
    )


NETWORK_STRUCTS: dict[str, type[ctypes.Structure]] = {
    "dcmi_ip_addr": IpAddr,
    "dcmi_spod_info": SpodInfo,
}
