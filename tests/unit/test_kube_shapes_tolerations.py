"""A claim's request tolerations are read from `exactly` and from each `firstAvailable`
alternative, and refused where the v1.34.3 API server refuses them, naming the field."""

from typing import Any

import pytest

from npu_dra.adapters.kube_shapes.claims import claim_from_api, spec_from_api
from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.reader import Fields
from npu_dra.domain.device_taints import TaintEffect
from npu_dra.domain.device_tolerations import DeviceToleration, TolerationOperator

KEY = "npu.huawei.com/health"


def claim(tolerations: list[dict[str, Any]], *, first_available: bool = False) -> dict[str, Any]:
    body = {"deviceClassName": "npu", "tolerations": tolerations}
    shape = {"firstAvailable": [{"name": "one", **body}]} if first_available else {"exactly": body}
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "demo"},
        "spec": {"devices": {"requests": [{"name": "npu", **shape}]}},
    }


def refusal(toleration: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(ShapeError) as raised:
        claim_from_api(claim([toleration]))
    return raised.value.field, raised.value.reason


def test_exact_tolerations_are_read_with_the_api_servers_defaults() -> None:
    found = claim_from_api(
        claim(
            [
                {"key": KEY, "value": "Unhealthy"},
                {"key": KEY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"operator": "Exists"},
            ]
        )
    )
    assert found.spec.requests[0].tolerations == (
        DeviceToleration(KEY, TolerationOperator.EQUAL, "Unhealthy"),
        DeviceToleration(KEY, TolerationOperator.EXISTS, "", "NoExecute", 30),
        DeviceToleration("", TolerationOperator.EXISTS),
    )


def test_a_subrequest_keeps_its_own_tolerations() -> None:
    doc = claim([{"key": KEY, "operator": "Exists"}], first_available=True)
    spec = spec_from_api(Fields(doc, obj="ResourceClaim demo/c").sub("spec").sub("devices"))
    (request,) = spec.requests
    assert request.tolerations == ()
    assert request.first_available[0].tolerations == (
        DeviceToleration(KEY, TolerationOperator.EXISTS),
    )


@pytest.mark.parametrize(
    ("toleration", "field", "reason"),
    [
        ({"operator": "In"}, "operator", "'In' is not Equal or Exists"),
        ({"operator": "Exists", "value": "x"}, "value", "must be empty for operator `Exists`"),
        (
            {"key": KEY, "effect": "PreferNoSchedule"},
            "effect",
            "is not NoSchedule or NoExecute or None",
        ),
        ({"key": "bad key"}, "key", "name part must consist of letters"),
        ({"key": "/health"}, "key", "empty prefix"),
        ({"key": KEY, "value": "x" * 64}, "value", "must be no more than 63 characters"),
        ({"key": KEY, "value": "-x"}, "value", "must consist of letters"),
    ],
    ids=[
        "operator",
        "exists-value",
        "prefer-no-schedule",
        "key",
        "key-prefix",
        "long-value",
        "value",
    ],
)
def test_an_invalid_toleration_is_refused_naming_its_field(
    toleration: dict[str, Any], field: str, reason: str
) -> None:
    found_field, found_reason = refusal(toleration)
    assert found_field == f"spec.devices.requests[0].exactly.tolerations[0].{field}"
    assert reason in found_reason


def test_a_subrequests_invalid_toleration_is_refused_too() -> None:
    with pytest.raises(ShapeError) as raised:
        claim_from_api(claim([{"operator": "Bogus"}], first_available=True))
    assert (
        raised.value.field == "spec.devices.requests[0].firstAvailable[0].tolerations[0].operator"
    )


def test_an_equal_toleration_without_a_key_is_accepted_as_the_api_server_does() -> None:
    """validateDeviceToleration, unlike a pod's, does not ask for Exists when the key is empty."""
    found = claim_from_api(claim([{"operator": "Equal", "value": "Unhealthy"}]))
    assert found.spec.requests[0].tolerations == (
        DeviceToleration("", TolerationOperator.EQUAL, "Unhealthy"),
    )


def test_a_none_effect_is_read_as_v1_36_accepts_it_and_tolerates_no_blocking_taint() -> None:
    """The kubelet plugin reads claims through this: what a 1.36 API server accepted must parse."""
    from npu_dra.domain.device_taints import DeviceTaint
    from npu_dra.domain.device_tolerations import tolerates

    found = claim_from_api(claim([{"key": KEY, "operator": "Exists", "effect": "None"}]))
    (toleration,) = found.spec.requests[0].tolerations
    assert toleration.effect == "None"
    assert not tolerates(toleration, DeviceTaint(KEY, "Unhealthy", TaintEffect.NO_SCHEDULE))
