"""Device metadata for the container (KEP-5304, kubernetes/enhancements keps/sig-node/
5304-dra-attributes-downward-api): per request of a claim, a JSON file of kind DeviceMetadata
(`metadata.resource.k8s.io/v1alpha1`) listing the request's devices with their facts as
resource.k8s.io DeviceAttributes (`{"int": 3}`, `{"string": "..."}`) and, where one is known,
their `networkData` (the NPU's device IP). The facts are domain/device_facts.py's, the same the
claim's status.devices carries.

Where the container finds it, as the KEP's framework mounts it:
`/var/run/dra-device-attributes/<claimName>/<requestName>/<driverName>-metadata.json`. This
driver writes a claim's files under one host directory per claim UID and mounts that directory
at `/var/run/dra-device-attributes/<claimName>` through the claim's CDI spec (`with_metadata`),
so any container given one of the claim's devices reads every request's file of the claim.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from npu_dra.domain.cdi import CdiSpec, Mount
from npu_dra.domain.checkpoint import PreparedClaim
from npu_dra.domain.device_facts import DeviceFacts

API_VERSION = "metadata.resource.k8s.io/v1alpha1"
KIND = "DeviceMetadata"
CONTAINER_ROOT = "/var/run/dra-device-attributes"
METADATA_OPTIONS = ("ro", "nosuid", "nodev", "bind")


def metadata_files(
    claim: PreparedClaim, facts: Sequence[DeviceFacts], driver: str
) -> dict[str, dict[str, Any]]:
    """Per file, by its path under the claim's directory (`<request>/<driver>-metadata.json`),
    its document. Each of the claim's requests that has a device here gets one."""
    by_request: dict[str, list[dict[str, Any]]] = {}
    for device in facts:
        for request in device.requests:
            by_request.setdefault(request.partition("/")[0], []).append(_device(device))
    meta = {"name": claim.ref.name, "namespace": claim.ref.namespace, "uid": claim.ref.uid}
    return {
        f"{request}/{driver}-metadata.json": {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {**meta, "generation": 1},
            "requests": [{"name": request, "devices": devices}],
        }
        for request, devices in sorted(by_request.items())
    }


def with_metadata(spec: CdiSpec, claim: PreparedClaim, host_dir: str) -> CdiSpec:
    """`spec` with the claim's metadata directory mounted read-only where KEP-5304 puts it."""
    mount = Mount(host_dir, f"{CONTAINER_ROOT}/{claim.ref.name}", METADATA_OPTIONS)
    edits = attrs.evolve(spec.edits, mounts=(*spec.edits.mounts, mount))
    return attrs.evolve(spec, edits=edits)


def _device(device: DeviceFacts) -> dict[str, Any]:
    facts = dict(device.facts) | ({} if device.share_id is None else {"shareID": device.share_id})
    found: dict[str, Any] = {
        "name": device.device,
        "driver": device.driver,
        "pool": device.pool,
        "attributes": {k: _attribute(v) for k, v in sorted(facts.items())},
    }
    if device.ips:
        found["networkData"] = {"ips": list(device.ips)}
    return found


def _attribute(value: int | str) -> Mapping[str, int | str]:
    return {"int": value} if isinstance(value, int) else {"string": value}
