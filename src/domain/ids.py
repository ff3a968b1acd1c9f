"""Typed identifiers, so a claim UID can never be passed where a device name is expected."""

from typing import NewType

DriverName = NewType("DriverName", str)
NodeName = NewType("NodeName", str)
PoolName = NewType("PoolName", str)
DeviceName = NewType("DeviceName", str)
ClaimUID = NewType("ClaimUID", str)
ClaimName = NewType("ClaimName", str)
Namespace = NewType("Namespace", str)
RequestName = NewType("RequestName", str)
DeviceClassName = NewType("DeviceClassName", str)
