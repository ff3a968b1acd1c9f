"""After a reboot the hardware may not tell a chip's PCI address (npu-smi's board query failing
for one chip, a driver slow to come up). The claims still prepared are then served by the chip's
name alone: the identity check the checkpoint recorded for is skipped. That is allowed (refusing
would strand every claim on a node whose npu-smi lost a column), never silent: the repair warns,
naming the claim, the chip and the identity it could not check."""

from __future__ import annotations

import logging

import attrs
import pytest

from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.app.services.restart_repair import log_report
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.profile import ASCEND_NPU
from tests.unit.app.test_preparer import DRIVER, HARDWARE, NODE, Node


class WithoutPciAddresses:
    """The node's chips as after a reboot in which the hardware told no PCI address for
    `chips`."""

    def __init__(self, *chips: str) -> None:
        self.hardware = FakeHardware(HARDWARE, node=NODE)
        self.chips = chips

    def probe(self) -> NodeInventory:
        found = self.hardware.probe()
        devices = tuple(
            attrs.evolve(d, pci_bus_id=None) if d.name in self.chips else d for d in found.devices
        )
        return attrs.evolve(found, devices=devices)


def rebooted(node: Node, *unreadable: str) -> ClaimPreparer:
    """The plugin started again over the same checkpoint and CDI directory."""
    return ClaimPreparer(
        fetch_deadline_s=20.0,
        cluster=node.cluster,  # type: ignore[arg-type]
        cdi=node.cdi,
        checkpoints=node.checkpoints,
        inventory=InventoryCache(WithoutPciAddresses(*unreadable)),
        driver=DRIVER,
        profile=ASCEND_NPU,
    )


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_chip_whose_pci_address_is_unreadable_after_a_reboot_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    node = Node()
    held, other = node.claim("held", "npu-3"), node.claim("other", "npu-4")
    node.prepare(held, other)
    node.cdi.memory.documents.clear()  # the tmpfs CDI directory, emptied by the reboot
    with caplog.at_level(logging.WARNING):
        report = rebooted(node, "npu-3").repair()
        log_report(report, "restart repair:")  # as the plugin logs each pass's report
    assert set(report.rewritten) == {held.uid, other.uid}  # served by name, as before
    said = [w for w in warnings(caplog) if "npu-3" in w]
    assert len(said) == 1, warnings(caplog)
    assert f"claim {held}" in said[0]
    assert "pci:0000:c4:00.0" in said[0]  # what the checkpoint recorded for npu-3
    assert "identity check skipped" in said[0]
    assert not [w for w in warnings(caplog) if "npu-4" in w]


def test_every_chip_read_as_before_gives_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    node = Node()
    node.prepare(node.claim("held", "npu-3"))
    with caplog.at_level(logging.WARNING):
        log_report(rebooted(node).repair(), "restart repair:")
    assert warnings(caplog) == []
