"""deploy/examples do what their comments say, on the driver's own simulation (`npu-dra
simulate`: the published slices, the DeviceClass from deploy/manifests, CEL selectors and
constraints, one node per pod): each example alone, on a cluster of a 910B node, a 310P node and
a 910 A+X node with one sick NPU."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.objects import EXAMPLES, load, manifests, of_kind, simulate_json

NODES = [
    {"name": "atlas-800i-a2", "hardware": {"chip": "910B4", "count": 8,
     "numaNodes": [6, 6, 4, 4, 0, 0, 2, 2], "topology": "mesh"}},
    {"name": "atlas-300i-duo", "hardware": {"chip": "310P3", "count": 2, "topology": "none"}},
    {"name": "atlas-800-910a", "hardware": {"chip": "910A", "count": 8, "topology": "rings",
     "health": {1: "Alarm"}}},
]  # fmt: skip


def simulate(
    example: Path, tmp_path: Path, nodes: list[dict[str, Any]] = NODES, *flags: str
) -> dict[str, Any]:
    simulated = [
        {"apiVersion": "npu-dra.simulation/v1", "kind": "SimulatedNode",
         "metadata": {"name": n["name"]}, "spec": {"hardware": n["hardware"]}}
        for n in nodes
    ]  # fmt: skip
    classes = of_kind(manifests(), "DeviceClass")
    return simulate_json([*simulated, *classes, *load([example])], tmp_path, *flags)


def attributes(output: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(node, device) -> {attribute: value} from the simulated ResourceSlices."""
    return {
        (s["spec"]["nodeName"], d["name"]): {
            name: next(iter(value.values())) for name, value in d["attributes"].items()
        }
        for s in output["resourceSlices"]
        for d in s["spec"].get("devices", ())
    }


def allocated(output: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for row in output["allocations"]:
        assert row["status"] == "Prepared", row
        yield row["node"], row["device"]


def example(name: str) -> Path:
    return EXAMPLES / name


def test_every_example_pod_uses_a_claim_or_template_of_its_file() -> None:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        objects = load([path])
        names = {o["metadata"]["name"] for o in objects if o["kind"].startswith("ResourceClaim")}
        for pod in of_kind(objects, "Pod"):
            for claim in pod["spec"]["resourceClaims"]:
                wanted = claim.get("resourceClaimName") or claim["resourceClaimTemplateName"]
                assert wanted in names, (path.name, wanted)
        for obj in objects:
            assert obj["metadata"]["namespace"] == "ascend-dra", path.name


def test_the_seed_template_gives_one_npu(tmp_path: Path) -> None:
    output = simulate(example("claim-template.yaml"), tmp_path)
    assert len(list(allocated(output))) == 1


def test_the_seed_numa_claim_takes_every_npu_of_numa_node_6(tmp_path: Path) -> None:
    output = simulate(example("numa-claim.yaml"), tmp_path)
    got = set(allocated(output))
    attrs = attributes(output)
    wanted = {k for k, a in attrs.items() if a.get("numaNode") == 6}
    assert got == wanted
    assert len(got) == 2


@pytest.mark.parametrize(
    ("file", "node", "count"),
    [("chip-910b-claim.yaml", "atlas-800i-a2", 2), ("chip-310p-claim.yaml", "atlas-300i-duo", 1)],
)
def test_a_chip_family_claim_lands_on_that_family(
    tmp_path: Path, file: str, node: str, count: int
) -> None:
    output = simulate(example(file), tmp_path)
    got = list(allocated(output))
    assert len(got) == count
    assert {n for n, _ in got} == {node}


def test_the_topology_claim_keeps_four_npus_in_one_group(tmp_path: Path) -> None:
    output = simulate(example("topology-group-claim.yaml"), tmp_path)
    got = list(allocated(output))
    attrs = attributes(output)
    assert len(got) == 4
    assert len({attrs[d]["topologyGroup"] for d in got}) == 1


def test_the_topology_claim_skips_a_ring_missing_a_healthy_npu(tmp_path: Path) -> None:
    # NPU 1 of the 910 A+X node is sick and not published, so ring-0 has three NPUs left: four
    # in one group can only be ring-1, even though seven NPUs are free.
    output = simulate(example("topology-group-claim.yaml"), tmp_path, nodes=NODES[2:])
    got = set(allocated(output))
    assert got == {("atlas-800-910a", f"npu-{i}") for i in (4, 5, 6, 7)}
    assert {attributes(output)[d]["topologyGroup"] for d in got} == {"ring-1"}


SHARED_910B = [{"name": "atlas-800i-a2", "hardware": {"chip": "910B4", "count": 2}}]


@pytest.mark.parametrize("version", ["1.34", "1.36"])
def test_the_share_example_gets_a_share_never_a_whole_chip(tmp_path: Path, version: str) -> None:
    """Beside a whole chip that is not shared: 1.34 gives a fixed share device, 1.36 8Gi of the
    consumable chip."""
    output = simulate(
        example("share-claim.yaml"), tmp_path, SHARED_910B, "--shared-chips", "npu-1",
        "--kubernetes-version", version,
    )  # fmt: skip
    [(node, device)] = allocated(output)
    assert device == ("npu-1-share-0" if version == "1.34" else "npu-1")
    assert attributes(output)[(node, device)]["shared"] is True


def test_the_vnpu_example_gets_a_vnpu_of_its_template(tmp_path: Path) -> None:
    nodes = [{"name": "atlas-800i-a2", "hardware": {"chip": "910B4", "count": 2, "vnpu": "910B4"}}]
    output = simulate(example("vnpu-claim.yaml"), tmp_path, nodes, "--kubernetes-version", "1.36")
    [(node, device)] = allocated(output)
    assert attributes(output)[(node, device)]["vnpuTemplate"] == "vir05_1c_8g"
