"""Another driver's opaque config in a claim that the API server accepts must not make our
prepare refuse the claim: a config entry (spec.devices.config, status.allocation.devices.config)
whose driver is not ours is neither decoded nor held to any bound here; only ours are.

Each claim is served as the API server serves it (its bytes, with the other driver's parameters
as that driver's client sent them) by a scripted server, read by the kube adapter over the real
kubernetes client, and prepared by the plugin's preparer. What the API server accepts: parameters
up to 10 KiB of raw JSON, however many of them are non-ASCII characters (the plugin counted each
as the 6 bytes of its \\u escape), nested up to its decoder's depth of 10,000 (the plugin's JSON
reader stopped at about 1,000), and strings that are not valid UTF-8 (kept as sent).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from npu_dra.adapters.cdi.memory import MemoryCdiStore
from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.preparer import ClaimPreparer
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimName, ClaimUID, DriverName, Namespace, NodeName
from npu_dra.domain.profile import ASCEND_NPU
from tests.faults.scripted_api import ScriptedApi

NODE, DRIVER, OTHER = NodeName("n1"), DriverName("npu.huawei.com"), "gpu.example.com"
CLAIM = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/mixed"
REF = ClaimRef(Namespace("ns"), ClaimName("mixed"), ClaimUID("3c9b5a2e-mixed"))
OURS = {"apiVersion": "npu.huawei.com/v1alpha1", "kind": "NpuConfig"}
DEPTH = 1_200

# The other driver's parameters, as raw JSON bytes its client sent and the API server stored.
FOREIGN = {
    "non-ascii": json.dumps({"note": "é" * 1_800}, ensure_ascii=False).encode(),
    "nested": b'{"tree":' + b"[" * DEPTH + b"]" * DEPTH + b"}",
    "invalid-utf8": b'{"blob":"\xff\xfe\xc3("}',
}


def _claim_bytes(foreign: bytes, ours: bytes = json.dumps(OURS).encode()) -> bytes:
    """A claim allocated on this node with one result of ours and one of the other driver, the
    other's config in its spec and both configs in its allocation (the scheduler copies them)."""
    results = [
        {"request": "npu", "driver": DRIVER, "pool": NODE, "device": "npu-0"},
        {"request": "gpu", "driver": OTHER, "pool": NODE, "device": "gpu-0"},
    ]
    requests = [
        {"name": "npu", "exactly": {"deviceClassName": "npu.huawei.com"}},
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
    ]
    mark_foreign, mark_ours = '"@FOREIGN@"', '"@OURS@"'
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": REF.name, "namespace": REF.namespace, "uid": REF.uid},
        "spec": {
            "devices": {
                "requests": requests,
                "config": [{"requests": ["gpu"], "opaque": {"driver": OTHER, "parameters": 0}}],
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": results,
                    "config": [
                        {"source": "FromClass", "opaque": {"driver": DRIVER, "parameters": 1}},
                        {
                            "source": "FromClaim",
                            "requests": ["gpu"],
                            "opaque": {"driver": OTHER, "parameters": 0},
                        },
                    ],
                }
            }
        },
    }
    text = json.dumps(body).replace('"parameters": 0', f'"parameters": {mark_foreign}')
    text = text.replace('"parameters": 1', f'"parameters": {mark_ours}')
    raw = text.encode()
    return raw.replace(mark_foreign.encode(), foreign).replace(mark_ours.encode(), ours)


@pytest.fixture
def api() -> Iterator[ScriptedApi]:
    with ScriptedApi() as scripted:
        yield scripted


def _preparer(api: ScriptedApi) -> ClaimPreparer:
    return ClaimPreparer(
        cluster=KubeCluster(api.api_client()),
        cdi=MemoryCdiStore(),
        checkpoints=MemoryCheckpointStore(),
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 8}, node=NODE)),
        driver=DRIVER,
        profile=ASCEND_NPU,
    )


@pytest.mark.parametrize("foreign", FOREIGN.values(), ids=FOREIGN.keys())
def test_another_drivers_config_does_not_make_our_prepare_refuse_the_claim(
    foreign: bytes, api: ScriptedApi
) -> None:
    api.objects[CLAIM] = _claim_bytes(foreign)
    outcome = _preparer(api).prepare([REF])[REF.uid]
    assert outcome.error is None
    assert [d.device for d in outcome.devices] == ["npu-0"]


@pytest.mark.parametrize("foreign", FOREIGN.values(), ids=FOREIGN.keys())
def test_our_own_config_is_still_decoded_beside_it(foreign: bytes, api: ScriptedApi) -> None:
    ours = json.dumps({**OURS, "sharing": {"strategy": "Sometimes"}}).encode()
    api.objects[CLAIM] = _claim_bytes(foreign, ours)
    error = _preparer(api).prepare([REF])[REF.uid].error
    assert error is not None
    assert "sharing.strategy" in error
    assert "Sometimes" in error


def test_our_own_config_nested_deep_is_refused_with_its_reason(api: ScriptedApi) -> None:
    ours = b'{"apiVersion":"npu.huawei.com/v1alpha1","kind":"NpuConfig","sharing":' + (
        b"[" * DEPTH + b"]" * DEPTH + b"}"
    )
    api.objects[CLAIM] = _claim_bytes(FOREIGN["non-ascii"], ours)
    error = _preparer(api).prepare([REF])[REF.uid].error
    assert error is not None
    assert "nested deeper than an NpuConfig can be" in error
