"""Which admission policies `simulate` applies to what it adds to a cluster.

It assumes npu-dra's NpuConfig policy (deploy/manifests/37-npuconfig-policy.yaml, the helm
chart's templates/npuconfig-policy.yaml): a scenario's claims, templates and classes with a bad
config entry of the simulated driver are refused (scenario_claims.py). A snapshot's own objects
were admitted already. With --from, a snapshot that holds the cluster's
ValidatingAdmissionPolicies and their bindings decides instead: the what-ifs are checked against
that policy only where the cluster has it bound. Other policies are not evaluated (simulate has
no `request`, `object` or `params` to give their CEL); they are named in a warning.

npu-dra's policy is known by what both manifests render the same: a variable `driver` holding
the driver's name as a CEL string literal.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
SHIPPED = "deploy/manifests/37-npuconfig-policy.yaml"


@attrs.frozen
class ClusterPolicies:
    npu_config: bool  # npu-dra's NpuConfig policy for the driver is bound
    others: tuple[str, ...] = ()  # other bound policies, not evaluated


def cluster_policies(
    docs: Sequence[Mapping[str, Any]] | None, driver: str
) -> ClusterPolicies | None:
    """The snapshot's bound policies; None when it holds no policy or binding at all."""
    if docs is None:
        return None
    bound = {
        str((d.get("spec") or {}).get("policyName"))
        for d in docs
        if d.get("kind") == POLICY_KINDS[1] and _denies(d)
    }
    policies = {
        str((d.get("metadata") or {}).get("name")): d
        for d in docs
        if d.get("kind") == POLICY_KINDS[0]
    }
    ours = {name for name, d in policies.items() if _is_npu_config_policy(d, driver)}
    return ClusterPolicies(
        npu_config=bool(ours & bound),
        others=tuple(sorted((bound & set(policies)) - ours)),
    )


def assumed_note(source: str) -> str:
    return (
        f"{source}: holds no ValidatingAdmissionPolicies: simulate assumes npu-dra's NpuConfig "
        f"policy ({SHIPPED}) checks the what-ifs' claims, templates and classes; add "
        "validatingadmissionpolicies,validatingadmissionpolicybindings to the kubectl get to let "
        "the cluster's own decide"
    )


def not_evaluated_note(source: str, names: Sequence[str]) -> str:
    return (
        f"{source}: ValidatingAdmissionPolicies not evaluated (simulate evaluates only npu-dra's "
        f"NpuConfig policy): {', '.join(names)}"
    )


def _denies(binding: Mapping[str, Any]) -> bool:
    actions = (binding.get("spec") or {}).get("validationActions") or []
    return "Deny" in actions


def _is_npu_config_policy(policy: Mapping[str, Any], driver: str) -> bool:
    variables = (policy.get("spec") or {}).get("variables") or []
    return any(
        isinstance(v, Mapping)
        and v.get("name") == "driver"
        and str(v.get("expression", "")).strip() in (f'"{driver}"', f"'{driver}'")
        for v in variables
    )
