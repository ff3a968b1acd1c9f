"""Where several nodes fit, the scores decide as kube-scheduler's default profile does, and
"any of N" counts only the nodes tied for the best score (domain/scheduling/scoring.py,
domain/scheduling/choose.py). The numbers in the comments are worked in test_scoring_formulas.py's
way: TaintToleration x3, NodeAffinity x2, LeastAllocated and BalancedAllocation x1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.unit.simulation.test_simulate_default import simulate

CLASS = """\
kind: DeviceClass
metadata: {name: npu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "npu.huawei.com"'}
---
kind: ResourceClaimTemplate
metadata: {name: one, namespace: t}
spec:
  spec:
    devices:
      requests:
      - {name: npu, exactly: {deviceClassName: npu}}
"""


def node(name: str, spec: str = "", labels: str = "{}", count: int = 2) -> str:
    return (
        f"kind: SimulatedNode\nmetadata: {{name: {name}, labels: {labels}}}\n"
        f"spec:\n  hardware: {{chip: 910B4, count: {count}}}\n{spec}"
    )


def pod(name: str, spec: str = "", claim: str = "one") -> str:
    return (
        f"kind: Pod\nmetadata: {{name: {name}, namespace: t}}\nspec:\n{spec}"
        f"  resourceClaims: [{{name: npu, resourceClaimTemplateName: {claim}}}]\n"
        "  containers: [{name: app, image: busybox}]\n"
    )


def decide(tmp_path: Path, *documents: str, args: tuple[str, ...] = ()) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([CLASS, *documents]))
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--no-prepare", *args)
    assert code == 0, err
    return {p["pod"]: (p["node"], p["nodesThatFit"]) for p in json.loads(out)["pods"]}


PREFERS_FAST = """\
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        preference:
          matchExpressions: [{key: tier, operator: In, values: [fast]}]
"""


def test_preferred_node_affinity_takes_the_one_node_it_prefers(tmp_path: Path) -> None:
    # b: affinity 100 x 2 on top of what a has: the only best node
    decided = decide(tmp_path, node("a"), node("b", labels="{tier: fast}"), pod("p", PREFERS_FAST))
    assert decided["t/p"] == ("b", 1)


def test_a_prefer_no_schedule_taint_sends_pods_elsewhere_until_tolerated(tmp_path: Path) -> None:
    spot = "  taints: [{key: spot, effect: PreferNoSchedule}]\n"
    tolerates = "  tolerations: [{key: spot, operator: Exists}]\n"
    decided = decide(
        tmp_path, node("a", spot), node("b"), pod("avoids"), pod("tolerates", tolerates)
    )
    # a: taints 0, fit 98 = 98; b: 300 + 98 = 398
    assert decided["t/avoids"] == ("b", 1)
    # tolerated, both get taints 100: a (idle, fit 98) beats b (one pod, fit 97)
    assert decided["t/tolerates"] == ("a", 1)


def test_identical_nodes_tie_and_the_least_loaded_is_shown(tmp_path: Path) -> None:
    decided = decide(tmp_path, node("a"), node("b"), node("c"), pod("p1"), pod("p2"), pod("p3"))
    assert decided["t/p1"] == ("a", 3)
    assert decided["t/p2"] == ("b", 2)  # a has a pod: 97 against b's and c's 98
    assert decided["t/p3"] == ("c", 1)


def test_one_pod_more_may_score_the_same(tmp_path: Path) -> None:
    """Nodes holding one and two pods both score 97 for a pod without requests (LeastAllocated:
    cpu 97.5 and 96.25, memory 98.78 and 98.17, truncated and averaged): the scheduler may take
    either, so both are counted."""
    pinned = "  nodeSelector: {kubernetes.io/hostname: b}\n"
    decided = decide(
        tmp_path,
        node("a", count=4),
        node("b", count=4),
        pod("on-a"),
        pod("on-b", pinned),
        pod("on-b-again", pinned),
        pod("p"),
    )
    assert decided["t/on-a"] == ("a", 2)
    assert decided["t/p"] == ("a", 2)


def test_a_preference_by_hostname_tells_identical_nodes_apart(tmp_path: Path) -> None:
    by_name = """\
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchFields: [{key: metadata.name, operator: In, values: [c]}]
"""
    decided = decide(tmp_path, node("a"), node("b"), node("c"), pod("p", by_name))
    assert decided["t/p"] == ("c", 1)


def test_in_a_large_cluster_any_node_that_fits_may_be_chosen(tmp_path: Path) -> None:
    """120 nodes: the scheduler stops at 60 feasible ones (numFeasibleNodesToFind: 50% of 120)
    from a rotating start and scores only those, so even the preferred node is not certain."""
    nodes = [node(f"n{i:03}") for i in range(119)] + [node("n119", labels="{tier: fast}")]
    decided = decide(tmp_path, *nodes, pod("p", PREFERS_FAST))
    assert decided["t/p"] == ("n119", 120)


FIRST_AVAILABLE = """\
kind: ResourceClaimTemplate
metadata: {name: big-or-small, namespace: t}
spec:
  spec:
    devices:
      requests:
      - name: npu
        firstAvailable:
        - {name: big, deviceClassName: npu, count: 2}
        - {name: small, deviceClassName: npu}
"""


def test_v136_scores_the_first_available_choice_and_v134_does_not(tmp_path: Path) -> None:
    """a (1 NPU) can give only `small`, b (2 NPUs) `big`. v1.34.3 has no DynamicResources score:
    a and b tie (an idle node each). v1.36.3: b 8, a 7, normalized 100 and 87, x2: b."""
    documents = (node("a", count=1), node("b"), FIRST_AVAILABLE, pod("p", claim="big-or-small"))
    assert decide(tmp_path, *documents, args=("--kubernetes-version", "1.34"))["t/p"] == ("a", 2)
    v136 = decide(tmp_path, *documents, args=("--kubernetes-version", "1.36"))
    assert v136["t/p"] == ("b", 1)


def test_pod_anti_affinity_is_decided_without_a_note(tmp_path: Path) -> None:
    """Once a note ("not modelled, decided without"); now decided (test_simulate_pod_topology)."""
    anti = """\
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: x}}
        topologyKey: kubernetes.io/hostname
"""
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([CLASS, node("a"), pod("p", anti)]))
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--no-prepare")
    assert code == 0, err
    (decided,) = json.loads(out)["pods"]
    assert (decided["node"], decided["reason"]) == ("a", None)
