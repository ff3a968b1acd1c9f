"""Generated scenarios for scale runs: `--generate nodes=500,npus=8,pods=2000`.

Identical Atlas-style nodes (910B4, NPUs paired per NUMA node), one DeviceClass, and pods from
two templates in turn: one NPU, and two NPUs on one NUMA node (a matchAttribute constraint).
"""

from typing import Any

from npu_dra.adapters.hardware.description import MAX_DEVICES_PER_NODE
from npu_dra.adapters.simulation_files.scenario import Scenario, ScenarioError
from npu_dra.adapters.simulation_files.scenario_load import (
    MAX_NODES,
    MAX_PODS,
    scenario_from_documents,
)
from npu_dra.domain.device_kinds import WHOLE, class_selector

DEFAULTS = {"nodes": 50, "npus": 8, "pods": 200}
LIMITS = {"nodes": MAX_NODES, "npus": MAX_DEVICES_PER_NODE, "pods": MAX_PODS}
DRIVER = "npu.huawei.com"


def parse_spec(text: str) -> dict[str, int]:
    values = dict(DEFAULTS)
    for part in filter(None, text.split(",")):
        key, _, number = part.partition("=")
        if key not in DEFAULTS or not number.isdigit() or int(number) < 1:
            raise ScenarioError(
                f"--generate: {part!r}: expected nodes=N, npus=N or pods=N with N >= 1"
            )
        if int(number) > LIMITS[key]:
            raise ScenarioError(f"--generate: {part!r}: at most {key}={LIMITS[key]}")
        values[key] = int(number)
    return values


def generated_scenario(text: str, *, driver: str = DRIVER) -> Scenario:
    spec = parse_spec(text)
    return scenario_from_documents(
        documents(**spec, driver=driver), source=f"generated ({text})", driver=driver
    )


def documents(*, nodes: int, npus: int, pods: int, driver: str = DRIVER) -> list[dict[str, Any]]:
    """The scenario's objects, in the order a file would list them."""
    return [*_nodes(nodes, npus), _device_class(driver), *_templates(driver), *_pods(pods)]


def _nodes(count: int, npus: int) -> list[dict[str, Any]]:
    numa = [i // 2 for i in range(npus)]
    return [
        {
            "kind": "SimulatedNode",
            "metadata": {"name": f"node-{i:05d}"},
            "spec": {"hardware": {"chip": "910B4", "count": npus, "numaNodes": numa}},
        }
        for i in range(count)
    ]


def _device_class(driver: str) -> dict[str, Any]:
    """The shipped whole-chip class (domain/device_kinds)."""
    expression = class_selector(WHOLE, driver=driver, profile="npu")
    selector = {"cel": {"expression": expression}}
    return {"kind": "DeviceClass", "metadata": {"name": driver}, "spec": {"selectors": [selector]}}


def _templates(driver: str) -> list[dict[str, Any]]:
    one = {"name": "npu", "exactly": {"deviceClassName": driver}}
    pair = {"name": "npu", "exactly": {"deviceClassName": driver, "count": 2}}
    same_numa = [{"matchAttribute": f"{driver}/numaNode"}]
    return [
        {
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "load"},
            "spec": {"spec": {"devices": devices}},
        }
        for name, devices in (
            ("one-npu", {"requests": [one]}),
            ("numa-pair", {"requests": [pair], "constraints": same_numa}),
        )
    ]


def _pods(count: int) -> list[dict[str, Any]]:
    return [_pod(i, "one-npu" if i % 2 == 0 else "numa-pair") for i in range(count)]


def _pod(i: int, template: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": f"pod-{i:05d}", "namespace": "load"},
        "spec": {
            "resourceClaims": [{"name": "npu", "resourceClaimTemplateName": template}],
            "containers": [{"name": "app", "image": "busybox"}],
        },
    }
