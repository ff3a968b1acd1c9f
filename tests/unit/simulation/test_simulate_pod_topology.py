"""`simulate` decides inter-pod (anti-)affinity and topology spread as kube-scheduler does
(domain/scheduling/pod_topology.py over domain/scheduling/pod_affinity.py, topology_spread.py):
against the pods it bound earlier in the run and a snapshot's bound pods, with the scheduler's
pending messages, and the fields decoded and refused as the API server does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.simulation.test_node_scores import CLASS, node
from tests.unit.simulation.test_simulate_default import simulate

ZONE = "topology.kubernetes.io/zone"


def pod(name: str, spec: str = "", labels: str = "{app: web}") -> str:
    return (
        f"kind: Pod\nmetadata: {{name: {name}, namespace: t, labels: {labels}}}\nspec:\n{spec}"
        "  resourceClaims: [{name: npu, resourceClaimTemplateName: one}]\n"
        "  containers: [{name: app, image: busybox}]\n"
    )


ON_A = "  nodeSelector: {kubernetes.io/hostname: a}\n"


def zoned(name: str, zone: str) -> str:
    return node(name, labels=f"{{{ZONE}: {zone}}}")


def anti(key: str, app: str = "web", kind: str = "podAntiAffinity") -> str:
    return (
        f"  affinity:\n    {kind}:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"      - labelSelector: {{matchLabels: {{app: {app}}}}}\n        topologyKey: {key}\n"
    )


def spread(when: str = "DoNotSchedule", more: str = "") -> str:
    return (
        f"  topologySpreadConstraints:\n  - {{maxSkew: 1, topologyKey: {ZONE}, "
        f"whenUnsatisfiable: {when}, labelSelector: {{matchLabels: {{app: web}}}}{more}}}\n"
    )


def run(tmp_path: Path, *documents: str, args: tuple[str, ...] = ()) -> dict[str, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text("---\n".join([CLASS, *documents]))
    code, out, err = simulate("--scenario", str(path), "-o", "json", "--no-prepare", *args)
    assert code in (0, 4), err
    document: dict[str, Any] = json.loads(out)
    return document


def decided(tmp_path: Path, *documents: str) -> dict[str, tuple[str | None, int, str | None]]:
    pods = run(tmp_path, *documents)["pods"]
    return {p["pod"][2:]: (p["node"], p["nodesThatFit"], p["reason"]) for p in pods}


def test_required_anti_affinity_by_hostname_keeps_pods_apart(tmp_path: Path) -> None:
    keeps_off = anti("kubernetes.io/hostname")
    pods = decided(tmp_path, node("a"), node("b"), pod("one"), pod("two", keeps_off))
    assert pods["one"] == ("a", 2, None)  # alike nodes: any of 2
    assert pods["two"] == ("b", 1, None)
    third = decided(tmp_path, node("a"), node("b"), pod("one"), pod("two"), pod("3rd", keeps_off))
    assert third["3rd"] == (
        None,
        0,
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.",
    )


def test_required_anti_affinity_by_zone_keeps_the_whole_zone(tmp_path: Path) -> None:
    pods = decided(
        tmp_path,
        zoned("a1", "a"),
        zoned("a2", "a"),
        zoned("b1", "b"),
        pod("one", "  nodeSelector: {kubernetes.io/hostname: a1}\n"),
        pod("two", anti(ZONE)),
    )
    assert pods["two"] == ("b1", 1, None)


def test_required_affinity_waits_for_a_matching_pod_unless_it_is_the_first(
    tmp_path: Path,
) -> None:
    follows_web = anti(ZONE, kind="podAffinity")
    documents = (zoned("a1", "a"), zoned("b1", "b"))
    alone = decided(tmp_path, *documents, pod("cache", follows_web, labels="{app: cache}"))
    assert alone["cache"] == (
        None,
        0,
        "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.",
    )
    pods = decided(
        tmp_path,
        *documents,
        pod("cache", follows_web, labels="{app: cache}"),
        pod("first", follows_web),  # matches its own term: may go anywhere
        pod("second", follows_web),
    )
    assert pods["first"] == ("a1", 2, None)
    assert pods["second"] == ("a1", 1, None)
    # The scheduler retries cache once a pod its affinity selects is bound (InterPodAffinity's
    # queueing hint, kube-scheduler v1.34.3 plugins/interpodaffinity/plugin.go
    # isSchedulableAfterPodChange): after the pods that were waiting behind it, which took a1's
    # two NPUs.
    assert pods["cache"] == (
        None,
        0,
        "0/2 nodes are available: 1 cannot allocate all claims, "
        "1 node(s) didn't match pod affinity rules.",
    )
    roomy = (node("a1", labels=f"{{{ZONE}: a}}", count=4), zoned("b1", "b"))
    retried = decided(
        tmp_path,
        *roomy,
        pod("cache", follows_web, labels="{app: cache}"),
        pod("first", follows_web),
        pod("second", follows_web),
    )
    assert retried["cache"] == ("a1", 1, None)


def test_a_retried_pod_keeps_the_claim_made_for_it(tmp_path: Path) -> None:
    follows_web = anti(ZONE, kind="podAffinity")
    document = run(
        tmp_path,
        zoned("a1", "a"),
        pod("cache", follows_web, labels="{app: cache}"),
        pod("first", follows_web),
    )
    [cache] = [p for p in document["pods"] if p["pod"] == "t/cache"]
    assert cache["node"] == "a1"
    assert len([r for r in document["allocations"] if r["pod"] == "t/cache"]) == 1


def test_a_bound_pods_anti_affinity_refuses_the_pods_it_selects(tmp_path: Path) -> None:
    pods = decided(
        tmp_path,
        node("a"),
        node("b", count=1),
        pod("lone", anti("kubernetes.io/hostname", app="noisy") + ON_A, labels="{app: lone}"),
        pod("filler", "  nodeSelector: {kubernetes.io/hostname: b}\n"),
        pod("noisy", labels="{app: noisy}"),
        pod("quiet", labels="{app: quiet}"),
    )
    assert pods["noisy"] == (
        None,
        0,
        "0/2 nodes are available: 1 cannot allocate all claims, "
        "1 node(s) didn't satisfy existing pods anti-affinity rules.",
    )
    assert pods["quiet"] == ("a", 1, None)


def test_preferred_affinity_takes_the_node_of_the_pod_it_prefers(tmp_path: Path) -> None:
    near = (
        "  affinity:\n    podAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
        "      - weight: 10\n        podAffinityTerm:\n"
        "          labelSelector: {matchLabels: {app: web}}\n"
        "          topologyKey: kubernetes.io/hostname\n"
    )
    pods = decided(tmp_path, node("a"), node("b"), pod("web"), pod("near", near, "{app: x}"))
    # without the preference b (idle) would win; with it a: InterPodAffinity 100 x 2
    assert pods["web"][0] == "a"
    assert pods["near"] == ("a", 1, None)


def test_do_not_schedule_spreads_over_zones_and_says_why_it_cannot(tmp_path: Path) -> None:
    nodes = (zoned("a1", "a"), zoned("b1", "b"), zoned("b2", "b"))
    # pinned pods count every zone's nodes, not only those their nodeSelector takes
    counted = spread(more=", nodeAffinityPolicy: Ignore")

    def on(host: str) -> str:
        return f"{counted}  nodeSelector: {{kubernetes.io/hostname: {host}}}\n"

    pods = decided(
        tmp_path,
        *nodes,
        pod("first", on("a1")),
        pod("second", on("a1")),
        pod("third", on("b2")),
        pod("fourth", on("b1")),
        pod("fifth", spread()),
    )
    assert pods["second"] == (
        None,
        0,
        "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, "
        "2 node(s) didn't match Pod's node affinity/selector.",
    )
    assert pods["fourth"] == ("b1", 1, None)
    # a1 and b2 hold a pod each, but zone b has two: only a1
    assert pods["fifth"] == ("a1", 1, None)


def test_min_domains_counts_missing_domains_as_empty(tmp_path: Path) -> None:
    nodes = (zoned("a1", "a"), zoned("b1", "b"))
    placed = (
        pod("a", "  nodeSelector: {kubernetes.io/hostname: a1}\n"),
        pod("b", "  nodeSelector: {kubernetes.io/hostname: b1}\n"),
    )
    assert decided(tmp_path, *nodes, *placed, pod("p", spread()))["p"][0] == "a1"
    pending = decided(tmp_path, *nodes, *placed, pod("p", spread(more=", minDomains: 3")))
    assert pending["p"][0] is None


def test_schedule_anyway_prefers_the_emptier_zone(tmp_path: Path) -> None:
    nodes = (zoned("a1", "a"), zoned("b1", "b"), zoned("b2", "b"))
    web_on_b1 = pod("web", "  nodeSelector: {kubernetes.io/hostname: b1}\n")
    plain = decided(tmp_path, *nodes, web_on_b1, pod("p", labels="{app: x}"))
    assert plain["p"] == ("a1", 2, None)  # a1 and b2 idle: any of 2
    soft = decided(tmp_path, *nodes, web_on_b1, pod("p", spread("ScheduleAnyway"), "{app: x}"))
    assert soft["p"] == ("a1", 1, None)


def test_match_label_keys_count_only_pods_with_the_same_value(tmp_path: Path) -> None:
    by_version = (
        "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - labelSelector: {matchLabels: {app: web}}\n"
        "        matchLabelKeys: [version]\n        topologyKey: kubernetes.io/hostname\n"
    )
    pods = decided(
        tmp_path,
        node("a"),
        node("b"),
        pod("v1", ON_A, "{app: web, version: '1'}"),
        pod("v2", by_version + ON_A, "{app: web, version: '2'}"),
        pod("v1-again", by_version + ON_A, "{app: web, version: '1'}"),
    )
    assert pods["v2"] == ("a", 1, None)
    assert pods["v1-again"] == (
        None,
        0,
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) didn't match pod anti-affinity rules.",
    )


@pytest.mark.parametrize(
    ("spec", "field", "complaint"),
    [
        (spread().replace("maxSkew: 1", "maxSkew: 0"), "maxSkew", "greater than zero"),
        (spread("Sometimes"), "whenUnsatisfiable", "Unsupported value"),
        (spread("ScheduleAnyway", ", minDomains: 2"), "minDomains", "DoNotSchedule"),
        (anti(ZONE).replace("topologyKey", "topologykey"), "topologykey", "unknown field"),
        (anti(""), "topologyKey", "can not be empty"),
        (spread(more=", matchLabelKeys: [app]"), "matchLabelKeys[0]", "exists in both"),
    ],
)
def test_fields_the_api_server_refuses_are_refused(
    tmp_path: Path, spec: str, field: str, complaint: str
) -> None:
    (refused,) = run(tmp_path, node("a"), pod("p", spec))["refused"]
    assert field in refused["field"]
    assert complaint in refused["reason"]


def test_explain_says_which_pods_stand_in_the_way(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    keeps_off = anti("kubernetes.io/hostname")
    path.write_text("---\n".join([CLASS, node("a"), pod("one"), pod("two", keeps_off)]))
    code, out, err = simulate("--scenario", str(path), "--explain", "-o", "json", "--no-prepare")
    assert code == 0, err
    (why,) = json.loads(out)["pods"][1]["explain"]
    assert why == {
        "reason": "a pod bound in the node's topology domain matches the pod's required "
        "podAntiAffinity",
        "nodes": ["a"],
    }


SNAPSHOT = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: t, labels: {team: x}}}
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2}
  status: {allocatable: {cpu: '8', memory: 8Gi, pods: '1'}}
- apiVersion: v1
  kind: Pod
  metadata: {name: running, namespace: t, labels: {app: web}}
  spec: {nodeName: n1, containers: [{name: app, image: busybox}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: filler, namespace: t}
  spec: {nodeName: n2, containers: [{name: app, image: busybox}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: team-x, namespace: u, creationTimestamp: '2026-01-01T00:00:01Z'}
  spec:
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchLabels: {app: web}}
          namespaceSelector: {matchLabels: {team: x}}
          topologyKey: kubernetes.io/hostname
    containers: [{name: app, image: busybox}]
- apiVersion: v1
  kind: Pod
  metadata: {name: own-namespace, namespace: u, creationTimestamp: '2026-01-01T00:00:02Z'}
  spec:
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchLabels: {app: web}}
          topologyKey: kubernetes.io/hostname
    containers: [{name: app, image: busybox}]
"""


def test_a_snapshots_bound_pods_count_with_their_labels_and_namespaces(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(SNAPSHOT)
    code, out, err = simulate("--from", str(path), "-o", "json", "--no-prepare")
    assert code == 0, err
    pods = {p["pod"]: (p["node"], p["reason"]) for p in json.loads(out)["pods"]}
    # the running pod's namespace t is labelled team=x: n1 is refused; n2 has no room
    assert pods["u/team-x"] == (
        None,
        "0/2 nodes are available: 1 Too many pods, 1 node(s) didn't match pod anti-affinity rules.",
    )
    assert pods["u/own-namespace"] == ("n1", None)  # the term selects namespace u only
