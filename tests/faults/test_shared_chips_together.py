"""Shared chips together with restarts, gate changes and crafted allocations (#44): what a chip
has given out in shares is never exceeded, whatever changed since it was given.

Each test is one plugin over the node's own stores (state "files" in a scratch directory) and
the in-memory API server, built by the node's container; a restart is a new container over the
same directory and claims, as a new process would be (the real processes:
test_shared_chips_restarts.py). The API server's answer to "do you serve consumable capacity"
is the test's (a 1.34 -> 1.36 upgrade turns DRAConsumableCapacity on: KEP-5075, beta in 1.36).

Facts used: a 910B4 has 32 GiB of memory and 20 AI cores (adapters/hardware/chips.py, from
Huawei's Atlas 800T A2 spec); fixed shares give 1/shares of each (domain/sharing.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dependency_injector import providers

from npu_dra.adapters.cluster.memory import MemoryCluster
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
    the claim's own error naming the chip and the flag; the other claim of the call is prepared."""
    node.start(consumable=True)
    crafted = node.claim("crafted", "npu-1", SHARE_IDS[0], memory="8Gi")
    fine = node.claim("fine", "npu-0", SHARE_IDS[1], memory="8Gi")
    outcomes = node.prepare(crafted, fine)
    assert outcomes["fine"].error is None, outcomes["fine"].error
    refused(outcomes["crafted"], "npu-1 is not a shared chip on this node (--shared-chips)")
