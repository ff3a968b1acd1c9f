"""Which kube-scheduler simulate decides as: versions, their DRA gate defaults, the gates a user
may set, and the allocator variant they select (domain/scheduling/versions.py)."""

import pytest

from npu_dra.domain.scheduling.versions import (
    GateError,
    parse_gates,
    scheduler_version,
)


def test_the_default_is_the_current_release_v1_37_2() -> None:
    assert scheduler_version().version == "v1.37.2"
    assert scheduler_version("").version == "v1.37.2"


def test_v1_34_3_default_gates_select_the_experimental_allocator() -> None:
    version = scheduler_version("1.34")
    assert version.version == "v1.34.3"
    assert version.on("DRAPrioritizedList")
    assert version.on("DRAAdminAccess")
    assert not version.on("DRAPartitionableDevices")
    assert not version.on("DRADeviceTaints")
    # DRAResourceClaimDeviceStatus (beta, on) is supported by the experimental variant only
    assert version.variant == "experimental"
    assert version.label == "kube-scheduler v1.34.3 with default gates (experimental allocator)"


def test_turning_device_status_off_in_v1_34_selects_the_incubating_allocator() -> None:
    version = scheduler_version("1.34", {"DRAResourceClaimDeviceStatus": False})
    assert version.variant == "incubating"
    assert "DRAResourceClaimDeviceStatus=false" in version.label


def test_v1_36_defaults_select_the_incubating_allocator_and_never_the_experimental() -> None:
    version = scheduler_version("v1.36.3")
    assert version.on("DRADeviceTaints")
    assert version.on("DRAPartitionableDevices")
    assert version.on("DRAConsumableCapacity")
    assert version.on("DRAExtendedResource")
    assert version.variant == "incubating"
    # the scheduler of 1.36.3 never sets ListTypeAttributes for the allocator
    assert scheduler_version("1.36", {"DRAListTypeAttributes": True}).variant == "incubating"


def test_v1_36_without_consumable_capacity_and_binding_conditions_runs_the_stable_one() -> None:
    gates = {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}
    assert scheduler_version("1.36", gates).variant == "stable"


def test_the_rules_follow_the_version() -> None:
    old, new = scheduler_version("1.34").allocator, scheduler_version("1.36").allocator
    assert old.keeps_refused_counters
    assert not new.keeps_refused_counters
    assert new.distinct_values
    assert not old.distinct_values
    assert new.device_taints
    assert not old.device_taints
    assert scheduler_version("1.34", {"DRAPartitionableDevices": True}).allocator.partitionable
    assert scheduler_version("1.36").pool_counters
    assert not scheduler_version("1.34").pool_counters


@pytest.mark.parametrize(
    ("version", "gates", "message"),
    [
        ("1.33", {}, "--kubernetes-version: '1.33' is not one simulate decides as"),
        ("1.34.1", {}, "--kubernetes-version"),
        ("1.34", {"DRAListTypeAttributes": True}, "DRAListTypeAttributes is not a DRA gate"),
        ("1.34", {"PodLevelResources": True}, "--feature-gates: PodLevelResources"),
        ("1.36", {"DRAAdminAccess": False}, "DRAAdminAccess is locked to true in v1.36.3"),
    ],
)
def test_what_a_version_does_not_have_is_refused_naming_the_flag(
    version: str, gates: dict[str, bool], message: str
) -> None:
    with pytest.raises(GateError, match=message):
        scheduler_version(version, gates)


def test_gates_are_parsed_as_kube_scheduler_takes_them() -> None:
    assert parse_gates(" DRADeviceTaints=true, DRAAdminAccess=False ,") == {
        "DRADeviceTaints": True,
        "DRAAdminAccess": False,
    }
    assert parse_gates("") == {}
    for bad in ("DRADeviceTaints", "DRADeviceTaints=yes", "=true"):
        with pytest.raises(GateError, match="--feature-gates"):
            parse_gates(bad)


def test_v1_37_defaults_as_its_kube_features_go_has_them() -> None:
    """k8s.io/kubernetes v1.37.2 pkg/features/kube_features.go: DeviceTaints and DeviceTaintRules
    GA, ExtendedResource GA and locked; the new alpha gates off."""
    version = scheduler_version("1.37")
    assert version.version == "v1.37.2"
    for gate in ("DRADeviceTaints", "DRADeviceTaintRules", "DRAExtendedResource"):
        assert version.on(gate)
    for gate in ("DRADerivedAttributes", "DRADeviceCompatibilityGroups"):
        assert not version.on(gate)
    assert not version.on("DRAFractionalCapacityRange")  # on only at compatibility 1.37
    assert version.variant == "incubating"
    assert scheduler_version("v1.37.2").version == "v1.37.2"


def test_v1_37_locks_what_went_ga_locked() -> None:
    for gate in ("DRAExtendedResource", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus"):
        with pytest.raises(GateError, match=f"{gate} is locked to true in v1.37.2"):
            scheduler_version("1.37", {gate: False})
    assert not scheduler_version("1.37", {"DRADeviceTaints": False}).on("DRADeviceTaints")


def test_v1_37_refuses_allocator_features_simulate_does_not_model() -> None:
    for gate in (
        "DRADerivedAttributes",
        "DRADeviceCompatibilityGroups",
        "DRAFractionalCapacityRange",
    ):
        with pytest.raises(GateError, match=f"{gate}=true: simulate does not model"):
            scheduler_version("1.37", {gate: True})


def test_v1_37_decides_by_v1_36s_rules() -> None:
    assert scheduler_version("1.37").allocator == scheduler_version("1.36").allocator
    assert scheduler_version("1.37").scoring == scheduler_version("1.36").scoring
