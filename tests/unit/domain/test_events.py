"""Which happenings become Kubernetes Events, and what they say."""

from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.events import EventType, Regarding, health_events, prepare_failure_event
from npu_dra.domain.ids import ClaimName, ClaimUID, Namespace, NodeName
from tests.unit.domain.test_pool import npu

REF = ClaimRef(Namespace("team-a"), ClaimName("train"), ClaimUID("uid-1"))


def node(*healths: Health) -> NodeInventory:
    return NodeInventory(NodeName("node-a"), tuple(npu(i, health=h) for i, h in enumerate(healths)))


def test_each_device_whose_health_changed_gets_one_node_event_saying_from_what_to_what() -> None:
    before = node(Health.HEALTHY, Health.UNHEALTHY, Health.HEALTHY)
    after = node(Health.CRITICAL, Health.HEALTHY, Health.HEALTHY)
    events = health_events(before, after)
    assert [(e.regarding, e.reason, e.type) for e in events] == [
        (Regarding("Node", "node-a"), "DeviceUnhealthy", EventType.WARNING),
        (Regarding("Node", "node-a"), "DeviceHealthy", EventType.NORMAL),
    ]
    assert events[0].note == "npu-0 (910B4, card 0 chip 0): Healthy -> Critical"


def test_no_change_no_event() -> None:
    assert health_events(node(Health.HEALTHY), node(Health.HEALTHY)) == ()


def test_a_prepare_failure_the_claims_owner_can_fix_is_a_warning_on_the_claim() -> None:
    event = prepare_failure_event(
        REF, "claim team-a/train (uid-1), device 'npu-7': device is Critical"
    )
    assert event is not None
    assert event.regarding == Regarding(
        "ResourceClaim", "train", "team-a", "uid-1", "resource.k8s.io/v1"
    )
    assert (event.reason, event.type) == ("PrepareFailed", EventType.WARNING)
    assert "device is Critical" in event.note
    assert "recreate the claim" in event.note


def test_a_prepare_failure_that_is_the_operators_gets_no_claim_event() -> None:
    assert prepare_failure_event(REF, "claim t/x: the API server did not answer within 20s") is None
    assert prepare_failure_event(REF, "something nobody foresaw") is None
