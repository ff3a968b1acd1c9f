"""Extended resources backed by DRA (KEP-5004, DRAExtendedResource), as kube-scheduler v1.34
serves them: a pod asking `huawei.com/Ascend910: 2` gets a claim of its own, made by the
scheduler, with one request per (container, extended resource) named
`container-<i>-request-<j>` (i over init containers then containers, j the resource's index in
the container's sorted requests), each for that many devices of the class that maps the name.

A class maps its `extendedResourceName`, or without one `deviceclass.resource.kubernetes.io/
<class>` (extended.DeviceClassMapping); when two classes claim one name the later in the scenario
wins (the scheduler lists classes in no promised order). Only names `IsExtendedResourceName`
accepts count: none under `kubernetes.io/`, which in v1.34.3 includes the implicit names, so the
scheduler itself never serves those. A name no class maps is no DRA matter: NodeResourcesFit
refuses the pod ("Insufficient").
"""

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from npu_dra.domain.scheduling.pod_requests import is_extended

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


@attrs.frozen
class ExtendedRequest:
    container: int  # index over initContainers + containers
    index: int  # the resource's index in the container's sorted requests
    resource: str
    count: int

    @property
    def request_name(self) -> str:
        return f"container-{self.container}-request-{self.index}"


def extended_requests(spec: Mapping[str, Any]) -> tuple[ExtendedRequest, ...]:
    """Every whole-number request of an extended resource, requests defaulting from limits as
    the API server does."""
    found = []
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    for i, container in enumerate(containers):
        resources = container.get("resources") or {}
        requests = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for j, name in enumerate(sorted(requests)):
            count = _whole(requests[name])
            if (is_extended(name) or name.startswith(IMPLICIT_PREFIX)) and count:
                found.append(ExtendedRequest(i, j, name, count))
    return tuple(found)


def class_mapping(
    device_classes: Iterable[Mapping[str, Any]], *, both_names: bool = False
) -> dict[str, str]:
    """Extended resource name -> class. v1.34.3: a class's explicit name, else its implicit
    one, the later class winning a clash. `both_names` (v1.36.3, k8s.io/dynamic-resource-
    allocation deviceclass/extendedresourcecache `updateResourceName2class`): both names, an
    explicit clash won by the newer class (creationTimestamp), on a tie by the lower name."""
    mapping: dict[str, str] = {}
    won: dict[str, tuple[str, str]] = {}  # explicit name -> (creationTimestamp, class)
    for doc in device_classes:
        name = str(doc["metadata"]["name"])
        explicit = (doc.get("spec") or {}).get("extendedResourceName")
        if not both_names:
            mapping[str(explicit) if explicit else f"{IMPLICIT_PREFIX}{name}"] = name
            continue
        mapping[f"{IMPLICIT_PREFIX}{name}"] = name
        if explicit:
            created = str(doc["metadata"].get("creationTimestamp") or "")
            held = won.get(str(explicit))
            if held is None or created > held[0] or (created == held[0] and name < held[1]):
                won[str(explicit)] = (created, name)
                mapping[str(explicit)] = name
    return mapping


def special_claim(
    pod_name: str, namespace: str, wanted: Iterable[ExtendedRequest], mapping: Mapping[str, str]
) -> dict[str, Any]:
    requests = [
        {
            "name": r.request_name,
            "exactly": {
                "deviceClassName": mapping[r.resource],
                "allocationMode": "ExactCount",
                "count": r.count,
            },
        }
        for r in wanted
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"generateName": f"{pod_name}-extended-resources-", "namespace": namespace},
        "spec": {"devices": {"requests": requests}},
    }


def _whole(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0
