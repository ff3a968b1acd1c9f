"""Another driver's opaque config, as a real v1.34.3 API server accepts it, in claims the plugin
process prepares (the chart's default configuration): non-ASCII text (1,800 characters), nesting
1,200 deep, and a string that is not valid UTF-8, each sent to the server as raw bytes in a
claim's spec and, as the scheduler copies it, in its allocation beside our own result. The
plugin must prepare our device and leave the other driver's config alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.e2e.plugin_process import DRIVER
from tests.e2e.seed_cluster import prefetch_granted
from tests.faults.harness import FaultNode, PluginRun, fault_node
from tests.faults.plugin_defaults import chart_defaults, daemonset_watch_granted
from tests.faults.test_foreign_driver_configs import DEPTH
from tests.support.controlplane import ControlPlane
from tests.support.kubelet import WireClaim

OTHER = "gpu.example.com"
FOREIGN = {
    "non-ascii": json.dumps({"note": "é" * 1_800}, ensure_ascii=False).encode(),
    "nested": b'{"tree":' + b"[" * DEPTH + b"]" * DEPTH + b"}",
    "invalid-utf8": b'{"blob":"\xff\xfe\xc3("}',
}
MARK = b'"@PARAMETERS@"'


def raw(plane: ControlPlane, method: str, path: str, body: bytes) -> bytes:
    """One request with `body` sent as is (the client would encode it as valid JSON text)."""
    api: Any = plane.api_client
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    api.update_params_for_auth(headers, [], ["BearerToken"], path, method, None)
    found = api.rest_client.pool_manager.request(
        method, api.configuration.host + path, body=body, headers=headers
    )
    assert 200 <= found.status < 300, f"{method} {path}: {found.status} {found.data[:400]!r}"
    return bytes(found.data)


def foreign_claim(node: FaultNode, name: str, device: str, parameters: bytes) -> WireClaim:
    path = f"/apis/resource.k8s.io/v1/namespaces/{node.namespace}/resourceclaims"
    requests = [
        {"name": "npu", "exactly": {"deviceClassName": DRIVER}},
        {"name": "gpu", "exactly": {"deviceClassName": OTHER}},
    ]
    entry = {"requests": ["gpu"], "opaque": {"driver": OTHER, "parameters": "@PARAMETERS@"}}
    body = {
        "metadata": {"name": name},
        "spec": {"devices": {"requests": requests, "config": [entry]}},
    }
    created = raw(node.plane, "POST", path, _with(body, parameters))
    uid = re.search(rb'"uid":"([^"]+)"', created)
    version = re.search(rb'"resourceVersion":"([^"]+)"', created)
    assert uid is not None
    assert version is not None
    body["metadata"] |= {"uid": uid.group(1).decode(), "resourceVersion": version.group(1).decode()}
    results = [
        {"request": "npu", "driver": DRIVER, "pool": node.name, "device": device},
        {"request": "gpu", "driver": OTHER, "pool": node.name, "device": "gpu-0"},
    ]
    body["status"] = {
        "allocation": {
            "devices": {"results": results, "config": [{"source": "FromClaim", **entry}]}
        }
    }
    raw(node.plane, "PUT", f"{path}/{name}/status", _with(body, parameters))
    return WireClaim(node.namespace, name, uid.group(1).decode())


def _with(body: dict[str, Any], parameters: bytes) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode().replace(MARK, parameters)


def test_the_plugin_prepares_claims_carrying_another_drivers_config(access: ControlPlane) -> None:
    with (
        prefetch_granted(access),
        daemonset_watch_granted(access),
        fault_node(access, "foreign") as node,
    ):
        claims = {
            kind: foreign_claim(node, f"foreign-{kind}", f"npu-{i}", parameters)
            for i, (kind, parameters) in enumerate(FOREIGN.items())
        }
        node.plugin = PluginRun.start(node, chart_defaults())
        with node.kubelet() as kubelet:
            answers = {kind: kubelet.prepare([c]).claims[c.uid] for kind, c in claims.items()}
    errors = {kind: answer.error for kind, answer in answers.items()}
    assert errors == dict.fromkeys(FOREIGN, ""), errors
    devices = {kind: [d.device_name for d in answer.devices] for kind, answer in answers.items()}
    assert devices == {kind: [f"npu-{i}"] for i, kind in enumerate(FOREIGN)}
