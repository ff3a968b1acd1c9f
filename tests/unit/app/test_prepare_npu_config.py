"""At prepare, the claim's NpuConfig (as the scheduler copied it into the allocation) is decoded
and each result held to it before anything is written: an invalid or unmet config fails that
claim alone, on the chips' path and on the vNPUs' path alike."""

import json

from npu_dra.domain.claims import Allocation, ClaimRef, ConfigSource, OpaqueConfig
from npu_dra.domain.ids import DriverName, NodeName, RequestName
from npu_dra.domain.metrics import error_reason
from npu_dra.domain.npu_config import API_VERSION, KIND
from tests.unit.app import test_preparer, test_vnpu_prepare
from tests.unit.app.test_preparer import DRIVER, devices

OTHER = DriverName("gpu.example.com")


def npu_config(strategy: str | None, *, source: ConfigSource = ConfigSource.CLAIM) -> OpaqueConfig:
    sharing = {"sharing": {"strategy": strategy}} if strategy else {}
    parameters = json.dumps({"apiVersion": API_VERSION, "kind": KIND, **sharing})
    return OpaqueConfig(source, DRIVER, parameters, (RequestName("npu"),))


def configure(cluster: object, ref: ClaimRef, *config: OpaqueConfig) -> None:
    """The claim's allocation again, with `config` as the scheduler would have copied it."""
    claim = cluster.get_claim(ref=ref)  # type: ignore[attr-defined]
    allocation = claim.allocation
    cluster.set_allocation(  # type: ignore[attr-defined]
        ref, Allocation(allocation.results, NodeName(allocation.node_name), config)
    )


def test_an_invalid_config_fails_its_claim_and_the_other_claim_prepares() -> None:
    node = test_preparer.Node()
    good = node.claim("good", "npu-0")
    bad = node.claim("bad", "npu-1")
    configure(node.cluster, good, npu_config("Exclusive"))
    configure(node.cluster, bad, npu_config("Sometimes"))
    outcomes = node.prepare(good, bad)
    assert devices(outcomes[good.uid]) == ["npu-0"]
    error = outcomes[bad.uid].error
    assert error == (
        f'claim {bad}: config[0] (FromClaim) field sharing.strategy: "Sometimes" is not '
        "Exclusive or Shared"
    )
    assert error_reason(error) == "bad_config"
    assert node.checkpointed() == {good.uid: ["npu-0"]}
    assert node.cdi.read(uid=bad.uid) is None
    assert node.journal == [f"cdi write {good.uid}", "checkpoint save"]


def test_a_shared_strategy_on_a_whole_chip_is_refused_before_anything_is_written() -> None:
    node = test_preparer.Node()
    ref = node.claim("wants-a-share", "npu-3")
    configure(node.cluster, ref, npu_config("Shared", source=ConfigSource.CLASS))
    error = node.prepare(ref)[ref.uid].error
    assert error is not None
    assert "config[0] (FromClass) field sharing.strategy: Shared needs a share" in error
    assert node.journal == []


def test_another_drivers_config_is_not_read() -> None:
    node = test_preparer.Node()
    ref = node.claim("mixed", "npu-0")
    configure(node.cluster, ref, OpaqueConfig(ConfigSource.CLAIM, OTHER, '{"gpus": "all"}'))
    assert devices(node.prepare(ref)[ref.uid]) == ["npu-0"]


def test_a_vnpu_claim_is_held_to_its_config_before_any_vnpu_is_made() -> None:
    node = test_vnpu_prepare.Node()
    refused = node.claim("a", test_vnpu_prepare.VIR05.format(0))
    configure(node.cluster, refused, npu_config("Shared"))
    error = node.preparer.prepare([refused])[refused.uid].error
    assert error is not None
    assert "field sharing.strategy: Shared needs a share" in error
    assert node.vnpu_ids() == []
    assert node.recorded().claims == {}


def test_an_exclusive_vnpu_claim_gets_its_vnpu() -> None:
    node = test_vnpu_prepare.Node()
    ref = node.claim("a", test_vnpu_prepare.VIR05.format(0))
    configure(node.cluster, ref, npu_config("Exclusive"))
    assert node.preparer.prepare([ref])[ref.uid].error is None
    assert len(node.vnpu_ids()) == 1
