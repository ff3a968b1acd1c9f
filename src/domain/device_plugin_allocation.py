"""What a container gets for the device ids the kubelet allocated it, computed from the inventory.

Deterministic and free of side effects, like the DRA path's CDI content, and built by the same
domain functions (`device_node`, `runtime_edits`): the same ids always give the same answer, so
a kubelet retry or a plugin restart changes nothing. Both injection paths are filled: explicit
device nodes and mounts work on any runtime, and the CDI names (when enabled) let a CDI-aware
runtime inject the same nodes and mounts from the static spec; CDI replaces entries with the
same path, so a container never gets a node twice.

The kubelet's Allocate has no per-container error slot: one unknown or unhealthy id fails the
whole call, with a message that names the offending ids. The message stays short whatever the
request holds (at most MAX_NAMED ids, each cut to MAX_ID_CHARS, then a count), because a client
drops an error status of megabytes and would never learn why.
"""

from collections.abc import Iterable, Sequence

import attrs

from npu_dra.domain.cdi import (
    DeviceNode,
    Mount,
    device_node,
    qualified_device_name,
    runtime_edits,
    visible_devices_env,
)
from npu_dra.domain.device import Device, HostFiles
from npu_dra.domain.errors import DomainError, PrepareError
from npu_dra.domain.profile import DeviceProfile


class AllocationRefused(DomainError):
    """The kubelet asked for devices this plugin cannot hand out."""


class UnknownDevices(AllocationRefused):
    pass


class UnhealthyDevices(AllocationRefused):
    pass


class MissingHostFiles(AllocationRefused):
    """The host lacks a device node the chips cannot work without (davinci_manager)."""


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
class AllocateSettings:
    profile: DeviceProfile
    driver_mounts: tuple[Mount, ...] = ()  # besides the driver files the probe found
    cdi_kind: str | None = None  # None: no CDI device names in the answer
    host: HostFiles = attrs.field(factory=HostFiles)  # what the probe found at start


@attrs.frozen
class ContainerAllocation:
    envs: tuple[tuple[str, str], ...]
    device_nodes: tuple[DeviceNode, ...]  # mode rw
    mounts: tuple[Mount, ...]  # read-only
    cdi_devices: tuple[str, ...]


def container_allocation(
    devices: Iterable[Device], ids: Sequence[str], settings: AllocateSettings
) -> ContainerAllocation:
    """Device nodes, shared nodes, driver mounts and env for `ids`, in physical-id order."""
    chosen = _checked({d.name: d for d in devices}, ids)
    profile, host, kind = settings.profile, settings.host, settings.cdi_kind
    try:
        shared = runtime_edits(chosen, host=host, profile=profile)
    except PrepareError as error:
        raise MissingHostFiles(str(error)) from error
    env = (*visible_devices_env(chosen, profile=profile), *shared.env)
    return ContainerAllocation(
        envs=tuple((k, v) for k, _, v in (e.partition("=") for e in env)),
        device_nodes=(
            *(device_node(d, host=host, profile=profile) for d in chosen),
            *shared.device_nodes,
        ),
        mounts=with_extra_mounts(shared.mounts, settings.driver_mounts),
        cdi_devices=tuple(qualified_device_name(kind, d.name) for d in chosen) if kind else (),
    )


def with_extra_mounts(found: Sequence[Mount], extra: Iterable[Mount]) -> tuple[Mount, ...]:
    """The driver files found, then `--driver-mounts` at container paths not already taken."""
    taken = {m.container_path for m in found}
    more = [m for m in extra if m.container_path not in taken]
    return (*found, *more)


def _checked(known: dict[str, Device], ids: Sequence[str]) -> list[Device]:
    unknown = sorted({i for i in ids if i not in known})
    if unknown:
        raise UnknownDevices(f"unknown device id(s): {named(unknown)}")
    chosen = sorted({known[i] for i in ids}, key=lambda d: d.physical_id)
    unhealthy = [f"{d.name} ({d.health.value})" for d in chosen if not d.health.usable]
    if unhealthy:
        raise UnhealthyDevices(f"unhealthy device(s): {', '.join(unhealthy[:MAX_NAMED])}")
    return chosen
