"""Which health word gets which device taint, and what a tainted pool looks like."""

import attrs
import pytest

from npu_dra.domain.device import Health, NodeInventory
from npu_dra.domain.device_taints import (
    DeviceTaint,
    TaintEffect,
    TaintPolicy,
    TaintPolicyError,
    parse_taint_policy,
)
from npu_dra.domain.ids import NodeName
from npu_dra.domain.pool import MAX_DEVICES_PER_SLICE_WITH_TAINTS, desired_slices
from npu_dra.domain.pool_sync import plan_sync
from tests.unit.domain.test_pool import DRIVER, npu

POLICY = TaintPolicy().for_driver(DRIVER)
NO_SCHEDULE, NO_EXECUTE = TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE


@pytest.mark.parametrize(
    ("health", "effect"),
    [
        (Health.HEALTHY, None),
        (Health.DEGRADED, None),
        (Health.UNHEALTHY, NO_SCHEDULE),
        (Health.CRITICAL, NO_EXECUTE),
        (Health.UNKNOWN, NO_SCHEDULE),
    ],
)
def test_the_default_table_maps_each_health_word_to_its_effect(
    health: Health, effect: TaintEffect | None
) -> None:
    assert POLICY.effect_of(health) is effect


def test_a_taint_is_keyed_by_the_driver_and_valued_by_the_health_word() -> None:
    assert POLICY.taints_of(npu(0, health=Health.CRITICAL)) == (
        DeviceTaint("npu.huawei.com/health", "Critical", NO_EXECUTE),
    )
    assert POLICY.taints_of(npu(0)) == ()


def test_operators_override_rows_and_untaint_words_with_none() -> None:
    policy = parse_taint_policy("Degraded=NoSchedule, Critical=NoSchedule,Unknown=None")
    assert policy.effect_of(Health.DEGRADED) is NO_SCHEDULE
    assert policy.effect_of(Health.CRITICAL) is NO_SCHEDULE
    assert policy.effect_of(Health.UNKNOWN) is None
    assert policy.effect_of(Health.UNHEALTHY) is NO_SCHEDULE  # untouched row keeps its default


def test_an_empty_policy_text_is_the_default_table() -> None:
    assert parse_taint_policy("") == TaintPolicy()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Broken=NoSchedule", "'Broken' is not a health word"),
        ("Healthy=NoSchedule", "'Healthy' is not a health word"),
        ("Critical=PreferNoSchedule", "effect must be one of NoSchedule, NoExecute, None"),
        ("Critical", "effect must be one of"),
    ],
)
def test_a_bad_policy_text_is_refused_with_what_was_wrong(text: str, says: str) -> None:
    with pytest.raises(TaintPolicyError, match=says):
        parse_taint_policy(text)


def inventory(*healths: Health) -> NodeInventory:
    return NodeInventory(NodeName("node-a"), tuple(npu(i, health=h) for i, h in enumerate(healths)))


def test_with_a_policy_unusable_devices_stay_in_the_pool_tainted() -> None:
    node = inventory(Health.HEALTHY, Health.UNHEALTHY, Health.CRITICAL, Health.DEGRADED)
    (only,) = desired_slices(node, driver=DRIVER, generation=1, taints=POLICY)
    assert [(d.name, [t.effect for t in d.taints]) for d in only.devices] == [
        ("npu-0", []),
        ("npu-1", [NO_SCHEDULE]),
        ("npu-2", [NO_EXECUTE]),
        ("npu-3", []),
    ]


def test_an_unusable_device_the_policy_does_not_taint_is_left_out_not_offered_bare() -> None:
    policy = parse_taint_policy("Unknown=None,Degraded=NoSchedule").for_driver(DRIVER)
    node = inventory(Health.UNKNOWN, Health.DEGRADED, Health.HEALTHY)
    (only,) = desired_slices(node, driver=DRIVER, generation=1, taints=policy)
    assert [(d.name, [t.effect for t in d.taints]) for d in only.devices] == [
        ("npu-1", [NO_SCHEDULE]),
        ("npu-2", []),
    ]


def test_without_a_policy_unusable_devices_are_left_out_as_before() -> None:
    node = inventory(Health.HEALTHY, Health.UNHEALTHY, Health.CRITICAL)
    (only,) = desired_slices(node, driver=DRIVER, generation=1)
    assert [d.name for d in only.devices] == ["npu-0"]
    assert all(not d.taints for d in only.devices)


def test_a_tainted_pool_is_split_at_the_servers_64_devices_per_slice() -> None:
    node = inventory(Health.UNHEALTHY, *[Health.HEALTHY] * 99)
    slices = desired_slices(node, driver=DRIVER, generation=1, taints=POLICY)
    assert [len(s.devices) for s in slices] == [MAX_DEVICES_PER_SLICE_WITH_TAINTS, 36]
    healthy = desired_slices(inventory(*[Health.HEALTHY] * 100), driver=DRIVER, generation=1)
    assert [len(s.devices) for s in healthy] == [100]


def test_a_taint_coming_or_going_is_a_change_the_pool_sync_writes() -> None:
    healthy = desired_slices(inventory(Health.HEALTHY), driver=DRIVER, generation=1, taints=POLICY)
    alarm = desired_slices(inventory(Health.UNHEALTHY), driver=DRIVER, generation=0, taints=POLICY)
    stored = tuple(attrs.evolve(s, name="a") for s in healthy)
    assert not plan_sync(stored, alarm).empty
    assert plan_sync(stored, healthy).empty
