"""A Pod as the claim prefetch reads it: the claims generated for it and whether it is done;
anything malformed is left out rather than trusted."""

from typing import Any

import pytest

from npu_dra.adapters.kube_shapes.pods import MAX_POD_CLAIMS, node_pod


def pod(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"uid": "u-1", "namespace": "team-a", "name": "web-0"},
        "spec": {"nodeName": "node-a"},
        "status": status,
    }


def test_the_claims_generated_for_it_are_its_claims() -> None:
    found = node_pod(
        pod(
            phase="Pending",
            resourceClaimStatuses=[
                {"name": "npu", "resourceClaimName": "web-0-npu-x7k2"},
                {"name": "none"},  # a template that generated nothing
            ],
        )
    )
    assert found is not None
    assert (found.uid, found.namespace, found.claims, found.done) == (
        "u-1",
        "team-a",
        ("web-0-npu-x7k2",),
        False,
    )


@pytest.mark.parametrize(
    ("status", "meta", "deleted"),
    [
        ({"phase": "Succeeded"}, {}, False),
        ({"phase": "Failed"}, {}, False),
        ({"phase": "Running"}, {"deletionTimestamp": "2026-11-25T00:00:00Z"}, False),
        ({"phase": "Running"}, {}, True),
    ],
)
def test_terminal_deleted_or_being_deleted_is_done(
    status: dict[str, str], meta: dict[str, str], deleted: bool
) -> None:
    body = pod(**status)
    body["metadata"].update(meta)
    found = node_pod(body, deleted=deleted)
    assert found is not None
    assert found.done


@pytest.mark.parametrize(
    "statuses",
    [
        "not a list",
        [{"resourceClaimName": "../../etc"}],
        [{"resourceClaimName": 7}],
        ["a string"],
    ],
)
def test_malformed_claim_statuses_name_no_claim(statuses: Any) -> None:
    found = node_pod(pod(resourceClaimStatuses=statuses))
    assert found is not None
    assert found.claims == ()


def test_a_huge_status_is_read_only_up_to_the_bound() -> None:
    many = [{"resourceClaimName": f"c-{n}"} for n in range(MAX_POD_CLAIMS * 10)]
    found = node_pod(pod(resourceClaimStatuses=many))
    assert found is not None
    assert len(found.claims) == MAX_POD_CLAIMS


@pytest.mark.parametrize(
    "meta", [{}, {"uid": "", "namespace": "a"}, {"uid": "u", "namespace": "Not_A_Label"}]
)
def test_a_pod_without_uid_or_namespace_is_not_read(meta: dict[str, str]) -> None:
    assert node_pod({"metadata": meta, "status": {}}) is None
