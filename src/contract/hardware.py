"""The contract every HardwareProbe adapter honours, as a reusable pytest class.

A backend passes when it names devices uniquely and stably (as its device profile names them:
`npu-<physical id>`, `gpu-<index>`), publishes only valid attribute names with values of the
declared type and valid capacities, maps health onto the domain's Health, reports the host's
device nodes and driver files well-formed, and turns every failure (an error answer, a hang,
malformed output) into a ProbeError within its timeout: never a shorter device list. Every
failure message starts with the rule that broke.

Use it by subclassing `HardwareContract` next to a `hardware_backend` fixture that returns a
`HardwareBackend`, or run it against your own adapter without a checkout of npu-dra:

    python -m npu_dra.contract package.module:factory
"""

import importlib
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

import attrs
import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.attributes import (
    Version,
    check_qualified_name,
    is_dns_label,
)
from npu_dra.domain.device import Device, Health, HostFiles, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.pool import PCI_BUS_ID, pool_devices, published_device
from npu_dra.domain.ports import HardwareProbe
from npu_dra.domain.profile import PROFILES
from npu_dra.domain.quantity import Quantity

# Attribute names the built-in profiles publish, with their types; others may be any type.
DECLARED_TYPES: dict[str, type] = {
    "chipName": str,
    "physicalId": int,
    "logicId": int,
    "cardId": int,
    "chipId": int,
    "numaNode": int,
    "topologyGroup": str,
    PCI_BUS_ID: str,
    "index": int,
    "minor": int,
    "uuid": str,
    "productName": str,
    "brand": str,
    "architecture": str,
    "cudaComputeCapability": Version,
    "driverVersion": Version,
    "cudaDriverVersion": Version,
    "migEnabled": bool,
}
HANG_TIMEOUT_S = 0.5
KILL_GRACE_S = 2.0  # time to kill and reap a hung helper process on a loaded machine


@attrs.frozen
class HardwareBackend:
    """A backend under test: how to build it working, and (optionally) broken in each way."""

    name: str
    healthy: Callable[[], HardwareProbe]
    failing: Sequence[Callable[[], HardwareProbe]] = ()  # its hardware answers with an error
    hanging: Callable[[float], HardwareProbe] | None = None  # never answers; arg = timeout (s)
    malformed: Sequence[Callable[[], HardwareProbe]] = ()  # answers with broken output


def load_backend(spec: str) -> HardwareBackend:
    """`package.module:factory` -> the backend; a factory returning a bare probe gets no
    failure scenarios (those tests skip)."""
    module_name, _, attribute = spec.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    made = factory()
    if isinstance(made, HardwareBackend):
        return made
    return HardwareBackend(spec, healthy=factory)


def rule(holds: bool, name: str, detail: object = "") -> None:
    """Fail naming the rule when it does not hold."""
    if not holds:
        pytest.fail(f"hardware contract rule broken: {name}" + (f": {detail}" if detail else ""))


class HardwareContract:
    def test_probe_returns_an_inventory(self, hardware_backend: HardwareBackend) -> None:
        inventory = _working(hardware_backend.healthy)
        rule(
            all(isinstance(device, Device) for device in inventory.devices),
            "the inventory holds the domain's Devices",
            inventory.devices,
        )
        rule(isinstance(inventory.host, HostFiles), "the inventory holds the host's files")

    def test_device_names_are_unique_and_stable_across_probes(
        self, hardware_backend: HardwareBackend
    ) -> None:
        probe = _built(hardware_backend.healthy)
        first, second = _working(lambda: probe), _working(lambda: probe)
        names = [device.name for device in first.devices]
        rule(len(names) == len(set(names)), "device names are unique", names)
        rule(
            _identities(first) == _identities(second),
            "the same probe names the same devices every time",
            (_identities(first), _identities(second)),
        )
        rule(
            _identities(_working(hardware_backend.healthy)) == _identities(first),
            "a new probe (a restart) names the same devices",
        )

    def test_device_names_are_dns_labels_named_by_their_profile(
        self, hardware_backend: HardwareBackend
    ) -> None:
        for device in _working(hardware_backend.healthy).devices:
            rule(device.profile in PROFILES, "a device names a known profile", device.profile)
            expected = PROFILES[device.profile].device_name(device)
            rule(is_dns_label(device.name), "device names are DNS labels", device.name)
            rule(
                device.name == expected,
                f"devices are named as the {device.profile!r} profile says",
                f"{device.name!r}, expected {expected!r}",
            )

    def test_published_attributes_are_valid_and_of_declared_type(
        self, hardware_backend: HardwareBackend
    ) -> None:
        for device in _working(hardware_backend.healthy).devices:
            try:
                attributes = published_device(device).attributes
            except DomainError as error:
                rule(False, "published attributes have valid names and values", error)
                continue
            for name, value in attributes.items():
                declared = DECLARED_TYPES.get(name, bool | int | str | Version)
                is_bool = isinstance(value, bool)
                rule(
                    isinstance(value, declared) and (declared is bool or not is_bool),
                    "attributes have their declared type",
                    f"{device.name}: {name}={value!r}, declared {declared}",
                )

    def test_capacities_are_valid_quantities(self, hardware_backend: HardwareBackend) -> None:
        for device in _working(hardware_backend.healthy).devices:
            capacity = published_device(device).capacity
            memory = PROFILES[device.profile].memory_capacity
            rule(
                memory in capacity and capacity[memory].value > 0,
                f"devices publish their memory ({memory}) > 0",
                f"{device.name}: {capacity}",
            )
            for name, quantity in capacity.items():
                rule(_qualified(name), "capacity names are qualified names", name)
                rule(
                    isinstance(quantity, Quantity)
                    and Quantity.parse(quantity.text) == quantity
                    and quantity.value >= 0,
                    "capacities are non-negative quantities that round-trip",
                    f"{device.name}: {name}={quantity!r}",
                )

    def test_health_is_mapped_and_only_usable_devices_are_published(
        self, hardware_backend: HardwareBackend
    ) -> None:
        inventory = _working(hardware_backend.healthy)
        rule(
            all(isinstance(device.health, Health) for device in inventory.devices),
            "health is the domain's Health",
        )
        usable = [device.name for device in inventory.devices if device.health.usable]
        published = [device.name for device in pool_devices(inventory)]
        rule(published == usable, "exactly the usable devices are published", published)

    def test_host_files_are_plain_node_names_and_absolute_paths_stable_across_probes(
        self, hardware_backend: HardwareBackend
    ) -> None:
        """What the CDI content's host side is built from: shared node names under an absolute
        dev root, driver files as absolute host and container paths, one per container path."""
        probe = _built(hardware_backend.healthy)
        host = _working(lambda: probe).host
        rule(host.dev_root.startswith("/"), "the dev root is absolute", host.dev_root)
        rule(
            all(name and "/" not in name for name in host.device_nodes),
            "shared device nodes are names under the dev root",
            sorted(host.device_nodes),
        )
        for file in host.driver_files:
            rule(
                file.host_path.startswith("/") and file.container_path.startswith("/"),
                "driver files have absolute host and container paths",
                file,
            )
        targets = [file.container_path for file in host.driver_files]
        rule(len(targets) == len(set(targets)), "one driver file per container path", targets)
        rule(_working(lambda: probe).host == host, "the host's files are the same on every probe")

    def test_failing_hardware_raises_probe_error(self, hardware_backend: HardwareBackend) -> None:
        if not hardware_backend.failing:
            pytest.skip(f"{hardware_backend.name} offers no failing variant")
        for index, make in enumerate(hardware_backend.failing):
            _refused(make, "failing hardware raises ProbeError", index)

    def test_hanging_hardware_raises_probe_error_within_timeout(
        self, hardware_backend: HardwareBackend
    ) -> None:
        if hardware_backend.hanging is None:
            pytest.skip(f"{hardware_backend.name} cannot hang")
        hanging = hardware_backend.hanging
        probe = _built(lambda: hanging(HANG_TIMEOUT_S))
        started = time.monotonic()
        _refused(lambda: probe, "hanging hardware raises ProbeError", 0)
        elapsed = time.monotonic() - started
        rule(
            elapsed < HANG_TIMEOUT_S + KILL_GRACE_S,
            "a hang gives up within the timeout",
            f"{elapsed:.1f}s",
        )

    def test_malformed_output_is_an_error_never_a_shorter_list(
        self, hardware_backend: HardwareBackend
    ) -> None:
        if not hardware_backend.malformed:
            pytest.skip(f"{hardware_backend.name} offers no malformed variant")
        for index, make in enumerate(hardware_backend.malformed):
            _refused(make, "malformed output is a ProbeError, never a shorter list", index)


def _built(make: Callable[[], HardwareProbe]) -> HardwareProbe:
    try:
        return make()
    except Exception as error:  # any error is the backend's, reported as a rule
        _broken("the backend's factory builds a probe", error)


def _working(make: Callable[[], HardwareProbe]) -> NodeInventory:
    """A working backend's inventory; anything else fails naming the rule."""
    probe = _built(make)
    try:
        inventory = probe.probe()
    except Exception as error:
        _broken("a working backend's probe() answers without error", error)
    rule(isinstance(inventory, NodeInventory), "probe() returns a NodeInventory", inventory)
    return inventory


def _refused(make: Callable[[], HardwareProbe], name: str, index: int) -> None:
    """Broken hardware: a ProbeError (from the factory or the probe), never an inventory and
    never another exception."""
    try:
        inventory = make().probe()
    except ProbeError:
        return
    except Exception as error:
        rule(False, name, f"variant {index} raised {type(error).__name__}: {error}")
    rule(False, name, f"variant {index} gave an inventory of {len(inventory.devices)} devices")


def _broken(name: str, error: Exception) -> NoReturn:
    pytest.fail(f"hardware contract rule broken: {name}: {type(error).__name__}: {error}")


def _qualified(name: str) -> bool:
    try:
        check_qualified_name(name)
    except DomainError:
        return False
    return True


def _identities(inventory: NodeInventory) -> list[tuple[str, int, int, int]]:
    return [(d.name, d.physical_id, d.card_id, d.chip_id) for d in inventory.devices]
