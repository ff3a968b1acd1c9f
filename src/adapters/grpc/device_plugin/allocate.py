"""What a container gets for the device ids the kubelet allocated it, computed from the inventory.

Deterministic and free of side effects, like the DRA path's CDI content: the same ids always give
the same answer, so a kubelet retry or a plugin restart changes nothing. Both injection paths are
filled: explicit device nodes and mounts work on any runtime, and the CDI names (when enabled)
let a CDI-aware runtime inject the same nodes and mounts from the static spec; CDI replaces
entries with the same path, so a container never gets a node twice.

The kubelet's Allocate has no per-container error slot: one unknown or unhealthy id fails the
whole call, with a message that names the offending ids. The message stays short whatever the
request holds (at most MAX_NAMED ids, each cut to MAX_ID_CHARS, then a count), because a client
drops an error status of megabytes and would never learn why.
"""

from collections.abc import Iterable, Sequence

import attrs

from npu_dra.domain.device import Device
from npu_dra.domain.errors import DomainError
from npu_dra.domain.profile import DeviceProfile


class AllocationRefused(DomainError):
    """The kubelet asked for devices this plugin cannot hand out."""


class UnknownDevices(AllocationRefused):
    pass


class UnhealthyDevices(AllocationRefused):
    pass


class TooManyDevices(AllocationRefused):
    pass


MAX_NAMED = 8
MAX_ID_CHARS = 64


def named(ids: Sequence[str]) -> str:
    """`ids` for an error message, bounded in length however many and long they are."""
    shown = [i[:MAX_ID_CHARS] + ("..." if len(i) > MAX_ID_CHARS else "") for i in ids]
    more = len(ids) - MAX_NAMED
    return ", ".join(shown[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")


def check_sizes(requests: Iterable[Sequence[str]], device_count: int) -> None:
    """No container can get more devices than the node has: refuse such a request outright."""
    for ids in requests:
        if len(ids) > device_count:
            raise TooManyDevices(
                f"a container asks for {len(ids)} device ids; this node has {device_count}"
            )


@attrs.frozen
class DriverMount:
    """A host path bind-mounted read-only into every container (driver libraries, npu-smi)."""

    host_path: str
    container_path: str

    @classmethod
    def parse(cls, text: str) -> "DriverMount":
        """`/host` (same path inside) or `/host:/container`."""
        host, _, container = text.partition(":")
        if not host.startswith("/") or (container and not container.startswith("/")):
            raise ValueError(f"driver mount {text!r}: expected /host/path[:/container/path]")
        return cls(host, container or host)


@attrs.frozen
class AllocateSettings:
    profile: DeviceProfile
    driver_mounts: tuple[DriverMount, ...] = ()
    cdi_kind: str | None = None  # None: no CDI device names in the answer


@attrs.frozen
class ContainerAllocation:
    envs: tuple[tuple[str, str], ...]
    device_nodes: tuple[str, ...]  # same path on the host and in the container, mode rw
    mounts: tuple[DriverMount, ...]
    cdi_devices: tuple[str, ...]


def container_allocation(
    devices: Iterable[Device], ids: Sequence[str], settings: AllocateSettings
) -> ContainerAllocation:
    """Device nodes and visible-devices env for `ids`, in physical-id order."""
    chosen = _checked({d.name: d for d in devices}, ids)
    profile = settings.profile
    visible = ",".join(str(d.physical_id) for d in chosen)
    kind = settings.cdi_kind
    return ContainerAllocation(
        envs=((profile.visible_devices_env, visible),),
        device_nodes=(*(d.device_node for d in chosen), *profile.shared_device_nodes),
        mounts=settings.driver_mounts,
        cdi_devices=tuple(f"{kind}={d.name}" for d in chosen) if kind else (),
    )


def _checked(known: dict[str, Device], ids: Sequence[str]) -> list[Device]:
    unknown = sorted({i for i in ids if i not in known})
    if unknown:
        raise UnknownDevices(f"unknown device id(s): {named(unknown)}")
    chosen = sorted({known[i] for i in ids}, key=lambda d: d.physical_id)
    unhealthy = [f"{d.name} ({d.health.value})" for d in chosen if not d.health.usable]
    if unhealthy:
        raise UnhealthyDevices(f"unhealthy device(s): {', '.join(unhealthy[:MAX_NAMED])}")
    return chosen
