"""A prepare that failed on the claim's NpuConfig puts a Warning on the claim that says to fix the
config and recreate the claim: another device would not help."""

from npu_dra.domain.events import MAX_NOTE, EventType, Regarding, prepare_failure_event
from tests.unit.domain.test_events import REF

BAD = (
    'claim team-a/train (uid-1): config[1] (FromClaim) field sharing.strategy: "Sometimes" is '
    "not Exclusive or Shared"
)
UNMET = (
    "claim team-a/train (uid-1), request 'npu', device 'npu-2': config[0] (FromClass) field "
    "sharing.strategy: Shared needs a share of a shared chip; the scheduler allocated a whole one"
)


def test_an_invalid_config_is_a_warning_on_the_claim_saying_to_fix_it_and_recreate() -> None:
    event = prepare_failure_event(REF, BAD)
    assert event is not None
    assert event.regarding == Regarding(
        "ResourceClaim", "train", "team-a", "uid-1", "resource.k8s.io/v1"
    )
    assert (event.reason, event.type) == ("PrepareFailed", EventType.WARNING)
    assert event.note.startswith(BAD)
    assert "fix the NpuConfig" in event.note
    assert "recreate the claim" in event.note
    assert "another device" not in event.note


def test_an_unmet_strategy_gets_the_same_advice() -> None:
    event = prepare_failure_event(REF, UNMET)
    assert event is not None
    assert "fix the NpuConfig" in event.note
    assert "another device" not in event.note


def test_a_device_failure_still_says_to_get_another_device() -> None:
    event = prepare_failure_event(REF, "claim team-a/train (uid-1): device is Critical")
    assert event is not None
    assert "to get another device" in event.note
    assert "NpuConfig" not in event.note


def test_the_advice_survives_an_error_longer_than_a_note() -> None:
    event = prepare_failure_event(REF, BAD + "x" * 2 * MAX_NOTE)
    assert event is not None
    assert len(event.note) <= MAX_NOTE
    assert event.note.endswith("recreate the claim (or its pod)")
