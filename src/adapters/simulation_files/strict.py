"""Unknown fields are errors, as for `kubectl apply` (strict field validation) against the API
server: a typo such as `cuont: 2` must fail, not quietly allocate one device.

A schema is a dict of the fields an object may hold: a nested dict for an object, a one-item
list for a list of those, ANY where the contents are not ours to check (container specs,
opaque parameters, status).
"""

from collections.abc import Mapping
from typing import Any

from npu_dra.adapters.kube_shapes.errors import ShapeError
from npu_dra.adapters.kube_shapes.reader import describe

ANY: dict[str, Any] = {"*": None}
_META = dict.fromkeys(
    [
        "name",
        "generateName",
        "namespace",
        "labels",
        "annotations",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "ownerReferences",
        "finalizers",
        "managedFields",
        "selfLink",
    ],
    ANY,
)
_SELECTOR = {"cel": {"expression": None}}
_TOLERATION = dict.fromkeys(("key", "operator", "value", "effect", "tolerationSeconds"))
_REQUEST_FIELDS = {
    "deviceClassName": None,
    "selectors": [_SELECTOR],
    "allocationMode": None,
    "count": None,
    "tolerations": [_TOLERATION],
    "capacity": ANY,
}
_CLAIM_SPEC = {
    "devices": {
        "requests": [
            {
                "name": None,
                "exactly": {**_REQUEST_FIELDS, "adminAccess": None},
                "firstAvailable": [{"name": None, **_REQUEST_FIELDS}],
            }
        ],
        "constraints": [{"requests": None, "matchAttribute": None, "distinctAttribute": None}],
        "config": [{"requests": None, "opaque": {"driver": None, "parameters": ANY}}],
    }
}
_REQUIREMENT = {"key": None, "operator": None, "values": None}
_TERM = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
_POD_SPEC_FIELDS = [
    "activeDeadlineSeconds",
    "automountServiceAccountToken",
    "containers",
    "dnsConfig",
    "dnsPolicy",
    "enableServiceLinks",
    "ephemeralContainers",
    "hostAliases",
    "hostIPC",
    "hostNetwork",
    "hostPID",
    "hostUsers",
    "hostname",
    "hostnameOverride",
    "imagePullSecrets",
    "initContainers",
    "nodeName",
    "os",
    "overhead",
    "preemptionPolicy",
    "priority",
    "priorityClassName",
    "readinessGates",
    "resources",
    "restartPolicy",
    "runtimeClassName",
    "schedulerName",
    "securityContext",
    "serviceAccount",
    "serviceAccountName",
    "setHostnameAsFQDN",
    "shareProcessNamespace",
    "subdomain",
    "terminationGracePeriodSeconds",
    "volumes",
]
_LABEL_SELECTOR = {"matchLabels": ANY, "matchExpressions": [_REQUIREMENT]}
_POD_TERM = {
    "labelSelector": _LABEL_SELECTOR,
    "namespaceSelector": _LABEL_SELECTOR,
    **dict.fromkeys(("namespaces", "topologyKey", "matchLabelKeys", "mismatchLabelKeys")),
}
_POD_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": [_POD_TERM],
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": None, "podAffinityTerm": _POD_TERM}
    ],
}
_SPREAD = {
    "labelSelector": _LABEL_SELECTOR,
    **dict.fromkeys(("maxSkew", "topologyKey", "whenUnsatisfiable", "minDomains")),
    **dict.fromkeys(("nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys")),
}
_TOP = {"apiVersion": None, "kind": None, "metadata": _META}
_NODE_SELECTOR = {"nodeSelectorTerms": [_TERM]}
_COUNTERS = {"name": None, "counters": ANY}
_SLICE_DEVICE = {
    **dict.fromkeys(("name", "nodeName", "allNodes", "bindsToNode", "allowMultipleAllocations")),
    **dict.fromkeys(("attributes", "capacity", "bindingConditions", "bindingFailureConditions")),
    "nodeSelector": _NODE_SELECTOR,
    "consumesCounters": [{"counterSet": None, "counters": ANY}],
    "taints": [{"key": None, "value": None, "effect": None, "timeAdded": None}],
}
_TAINT_RULE = {
    "deviceSelector": {
        **dict.fromkeys(("driver", "pool", "device", "deviceClassName")),
        "selectors": [_SELECTOR],
    },
    "taint": dict.fromkeys(("key", "value", "effect", "timeAdded")),
}
SCHEMAS: dict[str, dict[str, Any]] = {
    "DeviceTaintRule": {**_TOP, "spec": _TAINT_RULE, "status": ANY},
    "Namespace": {**_TOP, "spec": ANY, "status": ANY},
    # What --from reads of a cluster (kubectl get -o yaml): resource.k8s.io/v1 and core/v1.
    "Node": {
        **_TOP,
        "spec": {
            **dict.fromkeys(("podCIDR", "podCIDRs", "providerID", "unschedulable", "externalID")),
            "taints": [{"key": None, "value": None, "effect": None, "timeAdded": None}],
            "configSource": ANY,
        },
        "status": ANY,
    },
    "ResourceSlice": {
        **_TOP,
        "spec": {
            **dict.fromkeys(("driver", "nodeName", "allNodes", "perDeviceNodeSelection")),
            "pool": dict.fromkeys(("name", "generation", "resourceSliceCount")),
            "nodeSelector": _NODE_SELECTOR,
            "devices": [_SLICE_DEVICE],
            "sharedCounters": [_COUNTERS],
        },
    },
    "SimulatedNode": {
        **_TOP,
        "spec": {
            "hardware": ANY,
            "taints": [{"key": None, "value": None, "effect": None, "timeAdded": None}],
            "allocatable": ANY,
            "sharedChips": None,
            "chipShares": None,
        },
    },
    "DeviceClass": {
        **_TOP,
        "spec": {
            "selectors": [_SELECTOR],
            "config": [{"opaque": {"driver": None, "parameters": ANY}}],
            "extendedResourceName": None,
        },
    },
    "ResourceClaim": {**_TOP, "spec": _CLAIM_SPEC, "status": ANY},
    "ResourceClaimTemplate": {**_TOP, "spec": {"metadata": _META, "spec": _CLAIM_SPEC}},
    "Pod": {
        **_TOP,
        "spec": {
            **dict.fromkeys(_POD_SPEC_FIELDS, ANY),
            "nodeSelector": ANY,
            "tolerations": [_TOLERATION],
            "schedulingGates": [{"name": None}],
            "resourceClaims": [
                {"name": None, "resourceClaimName": None, "resourceClaimTemplateName": None}
            ],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [_TERM]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": None, "preference": _TERM}
                    ],
                },
                "podAffinity": _POD_AFFINITY,
                "podAntiAffinity": _POD_AFFINITY,
            },
            "topologySpreadConstraints": [_SPREAD],
        },
        "status": ANY,
    },
}


def check_known_fields(doc: Mapping[str, Any], kind: str) -> None:
    _check(doc, SCHEMAS[kind], describe(doc), "")


def _check(value: object, schema: object, obj: str, path: str) -> None:
    if schema is None or schema is ANY or value is None:
        return
    if isinstance(schema, list):
        if isinstance(value, list):
            for i, item in enumerate(value):
                _check(item, schema[0], obj, f"{path}[{i}]")
        return
    if not isinstance(schema, dict) or not isinstance(value, Mapping):
        return  # a wrong type is reported by the typed reader, with the expected type
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in schema:
            raise ShapeError(obj, where, "unknown field")
        _check(item, schema[key], obj, where)
