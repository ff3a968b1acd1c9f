"""A scenario's DeviceClass, ResourceClaim and ResourceClaimTemplate objects, checked as the API
server checks them on create: each must decode, a request for admin access must sit in a
Namespace labelled for it, and the simulated driver's config entries must be NpuConfigs, as the
cluster's ValidatingAdmissionPolicy (deploy/manifests/37-npuconfig-policy.yaml) has them. The
objects themselves go to the cluster as written.
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.claims import claim_from_api, device_class_from_api, spec_from_api
from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.domain.claims import ClaimSpec, OpaqueConfig
from npu_dra.domain.npu_config import ConfigError, decode

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_FORBIDDEN = (
    "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
    "label on the containing namespace"
)


def check_claim_objects(
    by_kind: Mapping[str, list[Mapping[str, Any]]], *, admitted: bool = False
) -> None:
    """ShapeError (a DomainError) for the first class, claim or template the API would refuse.
    `admitted`: read from a cluster, which admitted them; their namespaces' labels are unknown."""
    admin_namespaces = admin_namespaces_of(by_kind["Namespace"])
    for doc in by_kind["DeviceClass"]:
        device_class_from_api(doc)
    if admitted:
        admin_namespaces.add("*")
    for doc in by_kind["ResourceClaim"]:
        check_claim(doc, admin_namespaces)
    for doc in by_kind["ResourceClaimTemplate"]:
        check_template(doc, admin_namespaces)


def check_claim(
    doc: Mapping[str, Any], admin_namespaces: set[str], driver: str | None = None
) -> None:
    """`driver`: whose config entries must be NpuConfigs (None: nobody's, as in a snapshot)."""
    claim = claim_from_api(doc)
    _check_admin_access(doc, claim.spec, claim.ref.namespace, admin_namespaces, "spec")
    check_npu_configs(doc, claim.spec.config, "spec.devices.config", driver)


def check_template(
    doc: Mapping[str, Any], admin_namespaces: set[str], driver: str | None = None
) -> None:
    root = Fields(doc, obj=describe(doc))
    root.sub("metadata").need("name", str)
    spec = spec_from_api(root.sub("spec").sub("spec").sub("devices"))
    namespace = root.sub("metadata").get("namespace", str, "default")
    _check_admin_access(doc, spec, namespace, admin_namespaces, "spec.spec")
    check_npu_configs(doc, spec.config, "spec.spec.devices.config", driver)


def check_class(doc: Mapping[str, Any], driver: str | None = None) -> None:
    check_npu_configs(doc, device_class_from_api(doc).config, "spec.config", driver)


def check_npu_configs(
    doc: Mapping[str, Any], configs: tuple[OpaqueConfig, ...], at: str, driver: str | None
) -> None:
    """ShapeError naming the field, as the policy words it, for the first of `driver`'s entries
    (`at[i]`, in the object's order) whose parameters are not an NpuConfig."""
    for i, config in enumerate(configs):
        if config.driver != driver:
            continue
        try:
            decode(config.parameters)
        except ConfigError as error:
            field = ".".join(filter(None, (f"{at}[{i}].opaque.parameters", error.field)))
            raise Fields(doc, obj=describe(doc)).fail(field, error.reason) from None


def admin_namespaces_of(docs: list[Mapping[str, Any]]) -> set[str]:
    """The Namespaces labelled for admin access; ShapeError for one without a name."""
    found = set()
    for doc in docs:
        meta = Fields(doc, obj=describe(doc)).sub("metadata")
        name = meta.need("name", str)
        if meta.mapping("labels").get(ADMIN_ACCESS_LABEL) == "true":
            found.add(name)
    return found


def _check_admin_access(
    doc: Mapping[str, Any], spec: ClaimSpec, namespace: str, admin: set[str], at: str
) -> None:
    """The API server refuses adminAccess outside namespaces labelled for it."""
    for i, request in enumerate(spec.requests):
        if request.admin_access and namespace not in admin and "*" not in admin:
            field = f"{at}.devices.requests[{i}].exactly.adminAccess"
            raise Fields(doc, obj=describe(doc)).fail(field, ADMIN_ACCESS_FORBIDDEN)
