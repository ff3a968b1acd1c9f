"""Fault codes: Huawei's handling level of each code, our health word, and so the taint."""

import pytest

from npu_dra.domain.device import Health
from npu_dra.domain.device_taints import TaintEffect, TaintPolicy
from npu_dra.domain.fault_codes import (
    FaultLevel,
    FaultTableError,
    built_in_table,
    fault_table,
)

# One code per level, each as Huawei's faultCode.json lists it (fault_code_table.py).
SAMPLES = {
    FaultLevel.NOT_HANDLE: ("81078603", Health.DEGRADED, None),
    FaultLevel.SUB_HEALTH: (None, Health.DEGRADED, None),
    FaultLevel.RESTART_REQUEST: (None, Health.UNHEALTHY, TaintEffect.NO_SCHEDULE),
    FaultLevel.RESTART_BUSINESS: (None, Health.UNHEALTHY, TaintEffect.NO_SCHEDULE),
    FaultLevel.FREE_RESTART_NPU: (None, Health.UNHEALTHY, TaintEffect.NO_SCHEDULE),
    FaultLevel.PRE_SEPARATE_NPU: (None, Health.UNHEALTHY, TaintEffect.NO_SCHEDULE),
    FaultLevel.RESTART_NPU: ("8C03A000", Health.CRITICAL, TaintEffect.NO_EXECUTE),
    FaultLevel.SEPARATE_NPU: ("80E18402", Health.CRITICAL, TaintEffect.NO_EXECUTE),
}


def a_code_of(level: FaultLevel) -> str:
    table = built_in_table()
    return next(code for code, lv in sorted(table.levels.items()) if lv is level)


@pytest.mark.parametrize("level", list(FaultLevel))
def test_each_level_gives_its_health_word_and_taint_effect(level: FaultLevel) -> None:
    named, health, effect = SAMPLES[level]
    code = named or a_code_of(level)
    assert built_in_table().level_of(code) is level
    verdict = built_in_table().classify([code], reported=Health.UNHEALTHY)
    assert verdict.health is health
    assert verdict.reason == f"{level.value}: {code}"
    assert TaintPolicy().effect_of(verdict.health) is effect


def test_the_most_severe_code_decides() -> None:
    # The recorded 910A alarm: A4025021 (NotHandleFault), 8C03A000 (RestartNPU), 8C084E00.
    verdict = built_in_table().classify(
        ["A4025021", "8C03A000", "8C084E00"], reported=Health.UNHEALTHY
    )
    assert verdict.health is Health.CRITICAL
    assert verdict.reason.startswith("RestartNPU: 8C03A000")


def test_a_code_listed_under_two_levels_takes_the_more_severe() -> None:
    assert built_in_table().level_of("A2301001") is FaultLevel.SEPARATE_NPU


def test_an_unknown_code_keeps_the_hardware_word() -> None:
    verdict = built_in_table().classify(["DEADBEEF"], reported=Health.UNHEALTHY)
    assert verdict.health is Health.UNHEALTHY
    assert "unknown code DEADBEEF" in verdict.reason


def test_no_codes_keep_the_hardware_word() -> None:
    assert built_in_table().classify([], reported=Health.DEGRADED).health is Health.DEGRADED


def test_a_known_minor_code_outranks_an_alarm_word() -> None:
    """Huawei schedules by code, not by word: an Alarm whose only code needs no handling is
    Degraded (no taint by default)."""
    verdict = built_in_table().classify(["81078603"], reported=Health.UNHEALTHY)
    assert verdict.health is Health.DEGRADED


def test_an_override_table_in_huaweis_shape() -> None:
    table = fault_table(
        {"SeparateNPUCodes": ["81078603"], "NotHandleFaultCodes": ["80e18402"]}, source="f.yaml"
    )
    assert table.level_of("81078603") is FaultLevel.SEPARATE_NPU
    assert table.level_of("80E18402") is FaultLevel.NOT_HANDLE
    assert table.level_of("8C03A000") is None  # the file replaces the built-in table


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"SeparateNPUCode": []}, "f.json: 'SeparateNPUCode' is not a fault level"),
        ({"SeparateNPUCodes": ["80E1840"]}, "f.json: SeparateNPUCodes[0] = '80E1840' is not"),
        ({"RestartNPUCodes": ["8C03A000", 12]}, "f.json: RestartNPUCodes[1] = 12 is not"),
        ({"RestartNPUCodes": "8C03A000"}, "f.json: RestartNPUCodes: expected a list"),
        (["8C03A000"], "f.json: expected a mapping"),
    ],
)
def test_a_bad_table_entry_is_named(data: object, message: str) -> None:
    with pytest.raises(FaultTableError, match=message.replace("[", r"\[").replace("]", r"\]")):
        fault_table(data, source="f.json")
