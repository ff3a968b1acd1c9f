"""`simulate --from-cluster`: the objects a `simulate --from` snapshot holds, read once from a
live API server, only with GET (list) requests: nothing is ever written.

The kinds are those `kubectl get nodes,resourceslices,deviceclasses,resourceclaims,
resourceclaimtemplates,pods -A -o yaml` prints, plus namespaces (their labels, for inter-pod
terms), ValidatingAdmissionPolicies and their bindings where the credentials may read them, and
DeviceTaintRules where the server serves them (resource.k8s.io/v1 on v1.37, v1beta2 on
v1.36, v1alpha3 on v1.34: k8s.io/api resource/*/types.go). Pods that finished are left out by a
field selector, as the snapshot decoder leaves them out (their claims still hold their devices).
Each kind is listed in pages of PAGE objects (`limit`/`continue`: one consistent list per kind)
and stops with an error past its bound (the caller's, those the snapshot decoder applies); each
request has REQUEST_TIMEOUT_S and the whole read READ_TIMEOUT_S.
"""

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import urllib3
from kubernetes.client import ApiClient, ApiException
from kubernetes.config.config_exception import ConfigException

from npu_dra.adapters.cluster.kube.connect import api_client
from npu_dra.adapters.cluster.kube.raw import raw_call

FLAG = "--from-cluster"
PAGE = 500
REQUEST_TIMEOUT_S = 30
READ_TIMEOUT_S = 300
MAX_OTHER = 100_000  # a bound for each kind the caller does not bound
LIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"  # finished pods: left out
CORE, RESOURCE = "/api/v1", "/apis/resource.k8s.io"


@attrs.frozen
class Listing:
    kind: str
    api_version: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    optional: tuple[int, ...] = ()  # these statuses: none of them (not served, not readable)


LISTS = (
    Listing("Namespace", "v1", f"{CORE}/namespaces"),
    Listing("Node", "v1", f"{CORE}/nodes"),
    Listing("DeviceClass", "resource.k8s.io/v1", f"{RESOURCE}/v1/deviceclasses"),
    Listing("ResourceSlice", "resource.k8s.io/v1", f"{RESOURCE}/v1/resourceslices"),
    Listing("ResourceClaim", "resource.k8s.io/v1", f"{RESOURCE}/v1/resourceclaims"),
    Listing("ResourceClaimTemplate", "resource.k8s.io/v1", f"{RESOURCE}/v1/resourceclaimtemplates"),
    Listing(
        "Pod",
        "v1",
        f"{CORE}/pods",
        (("fieldSelector", "status.phase!=Succeeded,status.phase!=Failed"),),
    ),
)
# The cluster's admission policies, where the credentials may read them (simulation_files/
# admission_policies.py: without them simulate assumes npu-dra's NpuConfig policy).
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
POLICIES = tuple(
    Listing(kind, "admissionregistration.k8s.io/v1", f"{ADMISSION}/{path}", optional=(403, 404))
    for kind, path in (
        ("ValidatingAdmissionPolicy", "validatingadmissionpolicies"),
        ("ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"),
    )
)
TAINT_RULE_VERSIONS = ("v1", "v1beta2", "v1alpha3")  # the first the server serves (v1: 1.37)


class ClusterReadError(Exception):
    """The cluster could not be read: the message names the flag and the server."""


def reading_client(kubeconfig: str, in_cluster: bool) -> ApiClient:
    """A client from `kubeconfig`, else the pod's service account (`in_cluster`); ClusterReadError
    naming --kubeconfig for a file it cannot use."""
    if not kubeconfig and not in_cluster:
        raise ClusterReadError(
            f"{FLAG}: no --kubeconfig (env KUBECONFIG) and no in-cluster service account"
        )
    try:  # the plugin's own client, without retries: one read, a failure is reported
        return api_client(kubeconfig or None, persist=False)
    except (ConfigException, OSError, ValueError, TypeError) as error:
        where = f"--kubeconfig {kubeconfig}" if kubeconfig else "the in-cluster service account"
        raise ClusterReadError(f"{FLAG}: {where} is unusable: {error}") from error


def read_cluster(api: ApiClient, limits: Mapping[str, int]) -> list[dict[str, Any]]:
    """Every object of the kinds above, with its kind and apiVersion set as kubectl prints it.
    ClusterReadError naming the flag and the server when it is unreachable, refuses the
    credentials, does not serve resource.k8s.io/v1, or holds more of a kind than its bound."""
    deadline = time.monotonic() + READ_TIMEOUT_S
    found: list[dict[str, Any]] = []
    for listing in LISTS:
        found += _listed(api, listing, limits, deadline) or []
    for version in TAINT_RULE_VERSIONS:
        rules = _listed(
            api,
            Listing(
                "DeviceTaintRule",
                f"resource.k8s.io/{version}",
                f"{RESOURCE}/{version}/devicetaintrules",
                optional=(404,),
            ),
            limits,
            deadline,
        )
        if rules is not None:
            found += rules
            break
    for listing in POLICIES:
        found += _listed(api, listing, limits, deadline) or []
    return found


def server_of(api: ApiClient) -> str:
    return str(api.configuration.host)


def _listed(
    api: ApiClient, listing: Listing, limits: Mapping[str, int], deadline: float
) -> list[dict[str, Any]] | None:
    """The kind's objects, page by page; None for an optional kind the server does not serve."""
    kind = listing.kind
    limit, objects = limits.get(kind, MAX_OTHER), []
    try:
        for page in _pages(api, listing.path, listing.query, deadline):
            objects += [_as_printed(item, kind, listing.api_version) for item in page]
            if len(objects) > limit:
                raise ClusterReadError(
                    f"{FLAG}: {server_of(api)} holds more than {limit} {kind} objects: at most "
                    f"{limit}"
                )
    except ApiException as error:
        if error.status in listing.optional:
            return None
        raise ClusterReadError(_refusal(api, kind, listing.path, error)) from error
    except (urllib3.exceptions.HTTPError, OSError) as error:
        raise ClusterReadError(
            f"{FLAG}: the API server {server_of(api)} is unreachable (--kubeconfig names it): "
            f"{type(error).__name__}: {error}"
        ) from error
    return objects


def _pages(
    api: ApiClient, path: str, query: tuple[tuple[str, str], ...], deadline: float
) -> Iterator[list[Any]]:
    token = ""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ClusterReadError(f"{FLAG}: reading {server_of(api)} took over {READ_TIMEOUT_S} s")
        paging = [("limit", str(PAGE)), *([("continue", token)] if token else [])]
        timeout = min(REQUEST_TIMEOUT_S, left)
        response = raw_call(api, "GET", path, {}, timeout, query=[*query, *paging])
        document = json.loads(response.data)
        yield list(document.get("items") or [])
        token = str((document.get("metadata") or {}).get("continue") or "")
        if not token:
            return


def _as_printed(item: Any, kind: str, api_version: str) -> dict[str, Any]:
    """The object as `kubectl get -o yaml` prints it: kind and apiVersion set (a list's items
    lack them), no managedFields (kubectl hides them)."""
    metadata = {k: v for k, v in (item.get("metadata") or {}).items() if k != "managedFields"}
    return {**item, "apiVersion": api_version, "kind": kind, "metadata": metadata}


def _refusal(api: ApiClient, kind: str, path: str, error: ApiException) -> str:
    server = server_of(api)
    if error.status == 401:
        return f"{FLAG}: {server} refused the credentials of --kubeconfig (401 Unauthorized)"
    if error.status == 403:
        return (
            f"{FLAG}: {server} forbids listing {kind} objects ({path}) to the credentials of "
            "--kubeconfig; simulate needs get/list on nodes, pods, namespaces and "
            "resource.k8s.io (403 Forbidden)"
        )
    if error.status == 404:
        return (
            f"{FLAG}: {server} does not serve {path} (404): DRA's resource.k8s.io/v1 needs "
            "Kubernetes 1.34 or newer"
        )
    return f"{FLAG}: {server} answered {error.status} {error.reason} listing {kind} objects"
