"""A pod's effective requests (domain/scheduling/pod_requests.py), as k8s.io/component-helpers
resource.PodRequests adds them up, in the three sums the scheduler reads: plain (Fit's filter,
the node's Requested), with the non-zero defaults for LeastAllocated, and what the pod adds to
its node's NonZeroRequested."""

from fractions import Fraction

from npu_dra.domain.scheduling.pod_requests import Container, PodResources, pod_requests
from npu_dra.domain.scheduling.resources import GIB, MIB, Resources


def cpu(text: str) -> dict[str, Fraction]:
    return {"cpu": Fraction(text)}


def test_containers_add_up_and_a_missing_request_scores_as_the_default() -> None:
    pod = PodResources(
        (
            Container({"cpu": Fraction(1), "memory": Fraction(GIB)}),
            Container(cpu("0.5")),
        )
    )
    found = pod_requests(pod)
    assert found.requested == Resources(1500, GIB)
    # the second container has no memory request: it scores as 200Mi (DefaultMemoryRequest)
    assert found.scored == Resources(1500, GIB + 200 * MIB)
    assert found.held == found.scored


def test_an_explicit_zero_is_not_missing() -> None:
    """applyNonMissing fills only absent keys: `cpu: 0` stays 0."""
    found = pod_requests(PodResources((Container({"cpu": Fraction(0)}),)))
    assert found.scored == Resources(0, 200 * MIB)


def test_the_largest_init_container_counts_where_it_is_larger() -> None:
    pod = PodResources((Container(cpu("2")),), (Container(cpu("6")), Container(cpu("1"))))
    assert pod_requests(pod).requested.cpu == 6000  # max(2, 6, 1), not 2 + 6 + 1


def test_sidecars_run_beside_the_containers_and_later_init_containers() -> None:
    """containers 2 + sidecar 1 = 3; the init container after the sidecar needs 3 + 1 = 4:
    the larger, 4, counts."""
    pod = PodResources(
        (Container(cpu("2")),), (Container(cpu("1"), sidecar=True), Container(cpu("3")))
    )
    assert pod_requests(pod).requested.cpu == 4000
    lighter = PodResources(
        (Container(cpu("2")),), (Container(cpu("1"), sidecar=True), Container(cpu("1")))
    )
    assert pod_requests(lighter).requested.cpu == 3000  # 2 + 1 beats 1 + 1


def test_pod_level_requests_replace_the_containers_sum() -> None:
    pod = PodResources(
        (Container({"cpu": Fraction(1)}), Container()), pod_level={"memory": Fraction(GIB)}
    )
    found = pod_requests(pod)
    assert found.requested == Resources(1000, GIB)
    # LeastAllocated fills both containers' missing cpu and memory, then the pod level replaces
    # memory: cpu 1 + 0.1
    assert found.scored == Resources(1100, GIB)
    # NonZeroRequested with pod-level requests set fills only what neither level requests:
    # cpu is requested (1), memory is (1Gi): nothing is filled
    assert found.held == Resources(1000, GIB)


def test_overhead_is_added_and_quantities_round_up_once_summed() -> None:
    pod = PodResources(
        (Container(cpu("0.0004")), Container(cpu("0.0004"))),
        overhead={"cpu": Fraction(1, 10), "memory": Fraction(1)},
    )
    # 0.0008 + 0.1 cpu = 100.8m -> 101m (MilliValue rounds up the sum, not each container)
    assert pod_requests(pod).requested == Resources(101, 1)


def test_containers_without_requests_score_the_defaults_each() -> None:
    found = pod_requests(PodResources((Container(), Container())))
    assert found.requested == Resources()
    assert found.scored == found.held == Resources(200, 400 * MIB)
