"""Claim references come from the kubelet and end up in file names and logs, so they are checked."""

import pytest

from npu_dra.domain.claims import (
    Allocation,
    AllocationResult,
    ClaimRef,
    ClaimSpec,
    DeviceRequest,
    ResourceClaim,
    check_claim_uid,
)
from npu_dra.domain.errors import DomainError, InvalidName
from npu_dra.domain.ids import (
    ClaimName,
    ClaimUID,
    DeviceClassName,
    DeviceName,
    DriverName,
    Namespace,
    PoolName,
    RequestName,
)

UID = "722c0d8b-bc28-5d72-86fc-ebf33a5ce0f2"


def ref(namespace: str = "ascend-dra", name: str = "npu-numa-claim", uid: str = UID) -> ClaimRef:
    return ClaimRef(Namespace(namespace), ClaimName(name), ClaimUID(uid))


def test_a_kubelet_claim_reference_is_accepted() -> None:
    claim = ref()
    assert (claim.namespace, claim.name, claim.uid) == ("ascend-dra", "npu-numa-claim", UID)
    assert str(claim) == f"ascend-dra/npu-numa-claim ({UID})"


@pytest.mark.parametrize(
    "uid", ["../x", "a/b", "", "x" * 65, "a b", "-abc", "abc-", "abc\n", "a\x00b", "..", "a.b"]
)
def test_claim_uids_that_could_escape_a_directory_are_rejected(uid: str) -> None:
    with pytest.raises(InvalidName, match="claim UID"):
        ref(uid=uid)
    with pytest.raises(InvalidName, match="claim UID"):
        check_claim_uid(uid)


def test_a_uid_of_64_characters_is_the_longest_accepted() -> None:
    assert check_claim_uid("a" * 64) == "a" * 64
    assert ref(uid="A1" * 32).uid == "A1" * 32


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "", "x" * 254, "..", "Claim", "claim_1", "claim\n", "-claim"]
)
def test_claim_names_must_be_dns_subdomains(name: str) -> None:
    with pytest.raises(InvalidName, match="claim name"):
        ref(name=name)


def test_claim_names_may_contain_dots() -> None:
    assert ref(name="npu.claim-1").name == "npu.claim-1"


@pytest.mark.parametrize(
    "namespace", ["Ascend-Dra", "", "a.b", "a/b", "../x", "x" * 64, "default\n", "-ns"]
)
def test_namespaces_must_be_dns_labels(namespace: str) -> None:
    with pytest.raises(InvalidName, match="claim namespace"):
        ref(namespace=namespace)


def test_invalid_names_are_domain_errors_callers_can_report() -> None:
    with pytest.raises(DomainError):
        ref(uid="../../etc")


def test_the_kubelet_gets_the_request_without_its_subrequest() -> None:
    result = AllocationResult(
        RequestName("npu/small"), DriverName("d"), PoolName("p"), DeviceName("npu-0")
    )
    assert result.request_name == "npu"


def test_results_for_keeps_only_the_drivers_own_results() -> None:
    mine = AllocationResult(
        RequestName("npu"), DriverName("npu.huawei.com"), PoolName("n"), DeviceName("npu-0")
    )
    theirs = AllocationResult(
        RequestName("gpu"), DriverName("gpu.example.com"), PoolName("n"), DeviceName("gpu-0")
    )
    spec = ClaimSpec((DeviceRequest(RequestName("npu"), DeviceClassName("c")),))
    allocated = ResourceClaim(ref(), spec, Allocation((mine, theirs)))
    assert allocated.results_for(DriverName("npu.huawei.com")) == (mine,)
    assert ResourceClaim(ref(), spec).results_for(DriverName("npu.huawei.com")) == ()
