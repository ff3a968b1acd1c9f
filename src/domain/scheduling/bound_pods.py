"""The pods bound so far, as InterPodAffinity and PodTopologySpread read them: a snapshot's pods
on their nodes, then each pod simulate binds, in order, with its namespace, labels and terms
(domain/scheduling/pod_terms.py), and the labels of the cluster's namespaces.
"""

from collections.abc import Mapping

from npu_dra.domain.scheduling.pod_terms import Namespaces, PodTerms


class BoundPods:
    def __init__(self, namespaces: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.namespaces = Namespaces(dict(namespaces or {}))
        self.by_node: dict[str, list[PodTerms]] = {}
        # (node, pod) for the pods with inter-pod terms: the others only count where the
        # incoming pod has terms of its own
        self.with_terms: list[tuple[str, PodTerms]] = []

    def add(self, node: str, pod: PodTerms) -> None:
        self.by_node.setdefault(node, []).append(pod)
        if pod.has_affinity:
            self.with_terms.append((node, pod))

    def everywhere(self) -> list[tuple[str, PodTerms]]:
        return [(node, pod) for node, pods in self.by_node.items() for pod in pods]
