"""deploy/examples/npu-config-claim.yaml does what its comment says on the driver's simulation:
its pod gets one whole NPU, prepared; the same template asking for a share instead fails the
prepare, naming the config (nothing in the example's cluster is shared)."""

from pathlib import Path

from tests.deploy.objects import EXAMPLES, load, manifests, of_kind, only, simulate_json
from tests.deploy.test_example_claims import NODES

EXAMPLE = EXAMPLES / "npu-config-claim.yaml"


def run(tmp_path: Path, strategy: str) -> list[dict[str, str]]:
    objects = load([EXAMPLE])
    template = only(objects, "ResourceClaimTemplate")
    (entry,) = template["spec"]["spec"]["devices"]["config"]
    entry["opaque"]["parameters"]["sharing"]["strategy"] = strategy
    name, hardware = NODES[0]["name"], NODES[0]["hardware"]
    node = {"kind": "SimulatedNode", "metadata": {"name": name}, "spec": {"hardware": hardware}}
    output = simulate_json([node, *of_kind(manifests(), "DeviceClass"), *objects], tmp_path)
    rows: list[dict[str, str]] = output["allocations"]
    return rows


def test_the_exclusive_example_gets_one_whole_npu_prepared(tmp_path: Path) -> None:
    (row,) = run(tmp_path, "Exclusive")
    assert row["status"] == "Prepared"
    assert "-share-" not in row["device"]


def test_the_same_template_asking_for_a_share_fails_its_prepare_on_the_config(
    tmp_path: Path,
) -> None:
    (row,) = run(tmp_path, "Shared")
    assert row["status"].startswith("Error: claim ascend-dra/npu-exclusive-pod-npu-")
    assert "config[0] (FromClaim) field sharing.strategy: Shared needs a share" in row["status"]
