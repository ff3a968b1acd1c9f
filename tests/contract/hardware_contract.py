"""The contract every HardwareProbe adapter honours, as a reusable pytest class.

A backend passes when it names devices uniquely and stably (`npu-<physical id>`), publishes only
valid attribute names with values of the declared type and valid capacities, maps health onto
the domain's Health, and turns every failure (an error answer, a hang, malformed output) into a
ProbeError within its timeout: never a shorter device list.

Use it by subclassing `HardwareContract` next to a `hardware_backend` fixture that returns a
`HardwareBackend`, or run it against your own adapter without writing a test:

    pytest tests/contract --hardware-backend=package.module:factory
"""

import importlib
import time
from collections.abc import Callable, Sequence

import attrs
import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.domain.attributes import (
    Version,
    check_attribute_value,
    check_qualified_name,
    is_dns_label,
)
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.pool import PCI_BUS_ID, pool_devices, published_device
from npu_dra.domain.ports import HardwareProbe
from npu_dra.domain.quantity import Quantity

DECLARED_TYPES: dict[str, type] = {
    "chipName": str,
    "physicalId": int,
    "logicId": int,
    "cardId": int,
    "chipId": int,
    "numaNode": int,
    "topologyGroup": str,
    PCI_BUS_ID: str,
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


class HardwareContract:
    def test_probe_returns_an_inventory(self, hardware_backend: HardwareBackend) -> None:
        inventory = hardware_backend.healthy().probe()
        assert isinstance(inventory, NodeInventory)

    def test_device_names_are_unique_and_stable_across_probes(
        self, hardware_backend: HardwareBackend
    ) -> None:
        probe = hardware_backend.healthy()
        first, second = probe.probe(), probe.probe()
        names = [device.name for device in first.devices]
        assert len(names) == len(set(names))
        assert _identities(first) == _identities(second)
        assert _identities(hardware_backend.healthy().probe()) == _identities(first)

    def test_device_names_are_dns_labels_named_after_physical_ids(
        self, hardware_backend: HardwareBackend
    ) -> None:
        for device in hardware_backend.healthy().probe().devices:
            assert is_dns_label(device.name)
            assert device.name == f"npu-{device.physical_id}"

    def test_published_attributes_are_valid_and_of_declared_type(
        self, hardware_backend: HardwareBackend
    ) -> None:
        for device in hardware_backend.healthy().probe().devices:
            for name, value in published_device(device).attributes.items():
                check_qualified_name(name)
                check_attribute_value(name, value)
                assert isinstance(value, DECLARED_TYPES.get(name, bool | int | str | Version))
                assert not isinstance(value, bool) or DECLARED_TYPES.get(name) is None

    def test_capacities_are_valid_quantities(self, hardware_backend: HardwareBackend) -> None:
        for device in hardware_backend.healthy().probe().devices:
            capacity = published_device(device).capacity
            assert capacity["memCapacity"].value > 0
            for name, quantity in capacity.items():
                check_qualified_name(name)
                assert isinstance(quantity, Quantity)
                assert Quantity.parse(quantity.text) == quantity
                assert quantity.value >= 0

    def test_health_is_mapped_and_only_usable_devices_are_published(
        self, hardware_backend: HardwareBackend
    ) -> None:
        inventory = hardware_backend.healthy().probe()
        assert all(isinstance(device.health, Health) for device in inventory.devices)
        usable = [device.name for device in inventory.devices if device.health.usable]
        assert [device.name for device in pool_devices(inventory)] == usable

    def test_host_files_are_plain_node_names_and_absolute_paths_stable_across_probes(
        self, hardware_backend: HardwareBackend
    ) -> None:
        """What the CDI content's host side is built from: shared node names under an absolute
        dev root, driver files as absolute host and container paths, one per container path."""
        probe = hardware_backend.healthy()
        host = probe.probe().host
        assert host.dev_root.startswith("/")
        assert all(name and "/" not in name for name in host.device_nodes)
        for file in host.driver_files:
            assert file.host_path.startswith("/")
            assert file.container_path.startswith("/")
        targets = [file.container_path for file in host.driver_files]
        assert len(targets) == len(set(targets))
        assert probe.probe().host == host

    def test_failing_hardware_raises_probe_error(self, hardware_backend: HardwareBackend) -> None:
        if not hardware_backend.failing:
            pytest.skip(f"{hardware_backend.name} offers no failing variant")
        for make in hardware_backend.failing:
            with pytest.raises(ProbeError):
                make().probe()

    def test_hanging_hardware_raises_probe_error_within_timeout(
        self, hardware_backend: HardwareBackend
    ) -> None:
        if hardware_backend.hanging is None:
            pytest.skip(f"{hardware_backend.name} cannot hang")
        probe = hardware_backend.hanging(HANG_TIMEOUT_S)
        started = time.monotonic()
        with pytest.raises(ProbeError):
            probe.probe()
        assert time.monotonic() - started < HANG_TIMEOUT_S + KILL_GRACE_S

    def test_malformed_output_is_an_error_never_a_shorter_list(
        self, hardware_backend: HardwareBackend
    ) -> None:
        if not hardware_backend.malformed:
            pytest.skip(f"{hardware_backend.name} offers no malformed variant")
        for index, make in enumerate(hardware_backend.malformed):
            try:
                inventory = make().probe()
            except ProbeError:
                continue
            pytest.fail(f"malformed variant {index} gave {len(inventory.devices)} devices")


def _identities(inventory: NodeInventory) -> list[tuple[str, int, int, int]]:
    return [(d.name, d.physical_id, d.card_id, d.chip_id) for d in inventory.devices]
