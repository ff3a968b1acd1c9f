"""`simulate --explain`'s words for a node that PodTopologySpread or InterPodAffinity refuses
(domain/scheduling/topology_spread.py, pod_affinity.py): what the pod asked, and what stands
in the way, where the scheduler says only "node(s) didn't match pod affinity rules".
"""

from npu_dra.domain.scheduling.pod_affinity import (
    AFFINITY_NOT_MATCHED,
    ANTI_AFFINITY_NOT_MATCHED,
    EXISTING_ANTI_AFFINITY,
)
from npu_dra.domain.scheduling.topology_spread import MISSING_LABEL, NOT_MATCHED

_WORDS = {
    MISSING_LABEL: (
        "the node lacks the topologyKey label of one of the pod's DoNotSchedule "
        "topologySpreadConstraints"
    ),
    NOT_MATCHED: (
        "the pod here would put its domain more than maxSkew matching pods above the emptiest "
        "domain (topologySpreadConstraints, DoNotSchedule)"
    ),
    AFFINITY_NOT_MATCHED: (
        "no pod bound in the node's topology domain matches the pod's required podAffinity "
        "(or the node lacks its topologyKey label)"
    ),
    ANTI_AFFINITY_NOT_MATCHED: (
        "a pod bound in the node's topology domain matches the pod's required podAntiAffinity"
    ),
    EXISTING_ANTI_AFFINITY: (
        "a pod bound in the node's topology domain has a required podAntiAffinity term that "
        "matches this pod"
    ),
}


def topology_reason(refused: str) -> str:
    return _WORDS.get(refused, refused)
