"""Shared chips together with restarts, gate changes and crafted allocations (#44): what a chip
has given out in shares is never exceeded, whatever changed since it was given.

Each test is one plugin over the node's own stores (state "files" in a scratch directory) and
the in-memory API server, built by the node's container; a restart is a new container over the
same directory and claims, as a new process would be (the real processes:
test_shared_chips_restarts.py). The API server's answer to "do you serve consumable capacity"
is the test's (a 1.34 -> 1.36 upgrade turns DRAConsumableCapacity on: KEP-5075, beta in 1.36).

Facts used: a 910B4 has 32 GiB of memory and 20 AI cores (adapters/hardware/chips.py, from
Huawei's Atlas 800T A2 spec); fixed shares give 1/shares of each (domain/chip_sharing/policy.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dependency_injector import providers

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.container import NodeContainer
from npu_dra.app.options import Hardware, defaults
from npu_dra.domain.claims import Allocation, AllocationResult, ClaimRef
from npu_dra.domain.ids import (
    ClaimName,
    DeviceName,
    DriverName,
    Namespace,
    NodeName,
    PoolName,
    RequestName,
)
from npu_dra.domain.prepare import ClaimOutcome
from npu_dra.domain.quantity import Quantity

DRIVER = DriverName("npu.huawei.com")
NODE = NodeName("node-a")
NPU_0 = frozenset({DeviceName("npu-0")})
SHARE_IDS = [f"0f3c6a2e-1d5b-4c7a-9e8f-2a1b3c4d5e{i:02x}" for i in range(8)]


class Support:
    """The API server's answer about consumable capacity (DRAConsumableCapacity on or off)."""

    def __init__(self, consumable: bool) -> None:
        self.consumable = consumable

    def serves_consumable_capacity(self, *, node: NodeName, driver: DriverName) -> bool:
        return self.consumable


class Node:
    """One node's directory and claims; `start` is a plugin process started on it."""

    def __init__(self, root: Path) -> None:
        self.root, self.cluster = root, MemoryCluster()
        self.cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
        (root / "node.yaml").write_text("chip: 910B4\ncount: 4\n")
        self.plugin: NodeContainer | None = None

    def start(
        self, *, consumable: bool, shares: int = 4, chips: frozenset[DeviceName] = NPU_0
    ) -> NodeContainer:
        settings = defaults(
            node_name=NODE, driver_name=str(DRIVER), state="files",
            hardware=Hardware("fake", self.root / "node.yaml"),
            cdi_root=self.root / "cdi", plugins_dir=self.root / "plugins",
            shared_chips=chips, chip_shares=shares,
        )  # fmt: skip
        self.plugin = NodeContainer(
            settings=providers.Object(settings),
            cluster=self.cluster,
            consumable_support=providers.Object(Support(consumable)),
        )
        self.plugin.publisher().publish()
        return self.plugin

    def offer(self) -> dict[str, tuple[bool, object]]:
        """npu-0's published devices: whether several claims may hold each, and its shares."""
        return {
            d.name: (d.allow_multiple_allocations, d.attributes.get("shares"))
            for s in self.cluster.list_slices()
            for d in s.devices
            if d.name == "npu-0" or d.name.startswith("npu-0-")
        }

    def claim(
        self, name: str, device: str, share_id: str | None = None, memory: str = ""
    ) -> ClaimRef:
        made = self.cluster.create(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"devices": {"requests": [
                    {"name": "npu", "exactly": {"deviceClassName": DRIVER}}
                ]}},
            }
        )  # fmt: skip
        ref = ClaimRef(Namespace("ns"), ClaimName(name), made["metadata"]["uid"])
        consumed = (("memCapacity", Quantity.parse(memory)),) if memory else ()
        result = AllocationResult(
            RequestName("npu"), DRIVER, PoolName(NODE), DeviceName(device),
            share_id=share_id, consumed_capacity=consumed,
        )  # fmt: skip
        self.cluster.set_allocation(ref, Allocation((result,), NODE))
        return ref

    def prepare(self, *refs: ClaimRef) -> dict[str, ClaimOutcome]:
        assert self.plugin is not None
        outcomes = self.plugin.preparer().prepare(list(refs))
        return {ref.name: outcomes[ref.uid] for ref in refs}

    def unprepare(self, *refs: ClaimRef) -> None:
        assert self.plugin is not None
        errors = self.plugin.preparer().unprepare(list(refs))
        assert not any(errors.values()), errors


@pytest.fixture
def node(tmp_path: Path) -> Node:
    return Node(tmp_path)


def ok(outcomes: dict[str, ClaimOutcome]) -> None:
    assert {n: o.error for n, o in outcomes.items() if o.error} == {}


def refused(outcome: ClaimOutcome, *said: str) -> None:
    """The claim got its own error, saying each of `said`."""
    assert outcome.error is not None, f"prepared: {outcome.devices}"
    missing = [words for words in said if words not in outcome.error]
    assert missing == [], outcome.error


def fixed(count: int, shares: int | None = None) -> dict[str, tuple[bool, object]]:
    return {f"npu-0-share-{i}": (False, shares or count) for i in range(count)}


def test_sharing_x_gate_change_fixed_shares_held_stay_the_offer_until_released(
    node: Node,
) -> None:
    """An upgrade turns consumable capacity on while npu-0's four fixed shares are held: npu-0
    is still offered as those shares, not as a multi-allocatable chip beside them (200 %), and a
    share of it in the other form is refused, naming the chip and what it has given out."""
    node.start(consumable=False)
    held = [node.claim(f"fixed-{i}", f"npu-0-share-{i}") for i in range(4)]
    ok(node.prepare(*held))
    node.start(consumable=True)
    assert node.offer() == fixed(4)
    whole_memory = node.claim("consumable", "npu-0", SHARE_IDS[0], memory="32Gi")
    refused(node.prepare(whole_memory)["consumable"], "chip npu-0 has given out 32768 MiB")
    publisher = node.plugin.publisher()  # type: ignore[union-attr]
    assert not publisher.sharing_changed()
    node.unprepare(*held)
    assert publisher.sharing_changed()  # the maintainer's next tick republishes
    publisher.publish()
    assert node.offer() == {"npu-0": (True, None)}  # released: the configured form again


def test_sharing_x_gate_change_consumable_shares_held_are_not_offered_as_fixed_shares(
    node: Node,
) -> None:
    """Consumable capacity turned off while a consumable share of npu-0 is held: npu-0 is not
    offered at all (fixed shares beside it could give out more than the chip), and fixed shares
    still prepared on it (crafted, or allocated before the restart) stop at the chip's memory."""
    node.start(consumable=True)
    ok(node.prepare(node.claim("consumable", "npu-0", SHARE_IDS[0], memory="16Gi")))
    node.start(consumable=False)
    assert node.offer() == {}
    first, second, third = (node.claim(f"fixed-{i}", f"npu-0-share-{i}") for i in range(3))
    ok(node.prepare(first, second))  # 16 + 8 + 8 GiB: the whole chip
    refused(node.prepare(third)["fixed-2"], "chip npu-0 has given out 32768 MiB", "3 share(s)")


def test_sharing_x_chip_shares_change_held_shares_keep_their_count_until_released(
    node: Node,
) -> None:
    """--chip-shares changed from 4 to 8 while npu-0's four shares are held: npu-0 is still
    offered in its four shares (not eight: 150 %) until they are released, and an eighth-share
    device allocated meanwhile is refused, naming the chip and what it has given out."""
    node.start(consumable=False, shares=4)
    held = [node.claim(f"quarter-{i}", f"npu-0-share-{i}") for i in range(4)]
    ok(node.prepare(*held))
    node.start(consumable=False, shares=8)
    assert node.offer() == fixed(4)
    eighth = node.prepare(node.claim("eighth", "npu-0-share-4"))["eighth"]
    refused(eighth, "npu-0 is published in 4 shares", "4 share(s) of that count are held")
    fifth = node.claim("fifth", "npu-0", SHARE_IDS[0], memory="8Gi")  # its memory: given out
    refused(node.prepare(fifth)["fifth"], "chip npu-0 has given out 32768 MiB")
    node.unprepare(*held)
    node.plugin.publisher().publish()  # type: ignore[union-attr]
    assert node.offer() == fixed(8)


def test_sharing_x_restart_two_claims_each_consuming_the_whole_chips_memory(node: Node) -> None:
    """Crafted: two allocations of npu-0, each consuming all its 32 GiB. The first is prepared,
    the second gets its own error (across a restart as within one call), never 200 %."""
    node.start(consumable=True)
    first = node.claim("first", "npu-0", SHARE_IDS[0], memory="32Gi")
    second = node.claim("second", "npu-0", SHARE_IDS[1], memory="32Gi")
    outcomes = node.prepare(first, second)
    assert outcomes["first"].error is None, outcomes["first"].error
    refused(outcomes["second"], "chip npu-0 has given out 32768 MiB of its 32768 MiB memory")
    node.start(consumable=True)
    third = node.claim("third", "npu-0", SHARE_IDS[2], memory="32Gi")
    refused(node.prepare(third)["third"], "chip npu-0 has given out 32768 MiB")


def test_a_share_of_a_chip_not_named_by_shared_chips_is_refused(node: Node) -> None:
    """Crafted: a share (a shareID) of npu-1 where --shared-chips names npu-0 only: refused with
    the claim's own error naming the chip and the flag, and npu-1 is never put in sharing mode
    for it; the other claim of the call is prepared."""
    plugin = node.start(consumable=True)
    crafted = node.claim("crafted", "npu-1", SHARE_IDS[0], memory="8Gi")
    fine = node.claim("fine", "npu-0", SHARE_IDS[1], memory="8Gi")
    outcomes = node.prepare(crafted, fine)
    assert outcomes["fine"].error is None, outcomes["fine"].error
    refused(outcomes["crafted"], "npu-1 is not a shared chip on this node (--shared-chips)")
    hardware = plugin.hardware()
    assert isinstance(hardware, FakeHardware)
    assert hardware.device_share().on == {"npu-0"}
