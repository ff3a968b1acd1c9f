"""What the simulated version's gates turn off that a scenario asks for: the API server drops
it, so the run goes on without it, and says so rather than leaving the user to wonder why a vNPU
claim finds "no device"."""

from npu_dra.adapters.simulation_files.scenario import Scenario
from npu_dra.domain.scheduling.taint_rules import rules_gate, rules_served
from npu_dra.domain.scheduling.versions import SchedulerVersion

PARTITIONS = "DRAPartitionableDevices"


def gated_off(scenario: Scenario, version: SchedulerVersion) -> list[str]:
    """One warning per object asking for a feature its gate, off in `version`, drops."""
    return _partitions(scenario, version) + _taint_rules(scenario, version)


def _taint_rules(scenario: Scenario, version: SchedulerVersion) -> list[str]:
    if rules_served(version):
        return []
    gate = rules_gate(version)
    return [
        f"DeviceTaintRule {rule.name}: {gate} is off in kube-scheduler {version.version}: the "
        f"API server does not serve the rule, so its taint is not applied (--feature-gates "
        f"{gate}=true to decide with it)"
        for rule in scenario.taint_rules
    ]


def _partitions(scenario: Scenario, version: SchedulerVersion) -> list[str]:
    if version.on(PARTITIONS):
        return []
    return [
        f"node {name} asks for vNPUs (vnpu: {hardware['vnpu']}), but {PARTITIONS} is off in "
        f"kube-scheduler {version.version}: its chips are published whole (--feature-gates "
        f"{PARTITIONS}=true to decide with them)"
        for name, hardware, _ in scenario.nodes
        if hardware.get("vnpu")
    ]
