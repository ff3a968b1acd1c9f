"""Hostile or wrong input from the kubelet or the API: an error in that claim's slot, keyed by
the UID string as sent, nothing written, and the other claims of the call unaffected."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from plugin_node import DRIVER, Node

from npu_dra.adapters.checkpoint import FileCheckpointStore
from tests.support.kubelet import WireClaim, allocated_claim

BAD_REFERENCES = {
    "namespace traversal": WireClaim("../../etc", "claim", "uid-1"),
    "name traversal": WireClaim("team-a", "../../../etc/passwd", "uid-2"),
    "uid traversal": WireClaim("team-a", "claim", "../../cdi/evil"),
    "uid with slash": WireClaim("team-a", "claim", "a/b"),
    "namespace too long": WireClaim("n" * 64, "claim", "uid-3"),
    "name too long": WireClaim("team-a", "c" * 254, "uid-4"),
    "uid too long": WireClaim("team-a", "claim", "u" * 200),
    "empty uid": WireClaim("team-a", "claim", ""),
    "empty namespace": WireClaim("", "claim", "uid-5"),
    "upper-case name": WireClaim("team-a", "Claim", "uid-6"),
    "nul byte": WireClaim("team-a", "claim\x00x", "uid-7"),
}


def _files(root: Path) -> set[str]:
    return {os.path.relpath(p, root) for p in root.rglob("*") if not p.is_dir()}


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
@pytest.mark.parametrize("bad", BAD_REFERENCES.values(), ids=BAD_REFERENCES.keys())
def test_an_invalid_reference_fails_only_its_own_slot(
    node: Node, scratch: Path, bad: WireClaim, version: str
) -> None:
    good = node.claim("good", ["npu-0"])
    before = _files(scratch) - {os.path.relpath(node.cdi_spec(good), scratch)}

    with node.kubelet.register(version) as dra:
        prepared = dra.prepare([bad, good]).claims
        unprepared = dra.unprepare([bad]).claims

    assert set(prepared) == {bad.uid, good.uid}
    assert "invalid claim reference" in prepared[bad.uid].error
    assert not prepared[bad.uid].devices
    assert prepared[good.uid].error == ""
    assert "invalid claim reference" in unprepared[bad.uid].error
    metadata = node.settings.plugins_dir / DRIVER / "dra-device-metadata" / good.uid  # KEP-5304
    created = {f for f in _files(scratch) - before if not (scratch / f).is_relative_to(metadata)}
    assert created <= {
        os.path.relpath(node.cdi_spec(good), scratch),
        os.path.relpath(node.checkpoint_file, scratch),
        os.path.relpath(FileCheckpointStore(node.checkpoint_file).journal, scratch),
        os.path.relpath(node.checkpoint_file.with_name("boot-id"), scratch),  # the boot repaired
    }


def test_a_uid_that_does_not_match_the_stored_claim_is_refused(node: Node) -> None:
    real = node.claim("replaced", ["npu-1"])
    stale = WireClaim(real.namespace, real.name, "0d4c9a3e-0000-4000-8000-000000000000")

    with node.kubelet.register() as dra:
        answer = dra.prepare([stale]).claims[stale.uid]

    assert "not found" in answer.error
    assert not node.settings.cdi_root.exists() or not any(node.settings.cdi_root.iterdir())


def test_a_claim_missing_from_the_api_is_refused(node: Node) -> None:
    ghost = WireClaim("team-a", "ghost", "5a1e0000-0000-4000-8000-000000000001")

    with node.kubelet.register() as dra:
        assert "not found" in dra.prepare([ghost]).claims[ghost.uid].error


@pytest.mark.parametrize(
    ("devices", "pool", "expected"),
    [
        (["npu-42"], "node-1", "no such device"),
        (["npu-1"], "node-2", "allocated from pool 'node-2'"),
        (["npu-7"], "node-1", "Critical"),
        (["npu-1", "npu-42"], "node-1", "no such device"),
    ],
    ids=["unknown device", "another node's pool", "unhealthy device", "one bad of two"],
)
def test_results_this_node_cannot_serve_are_refused_and_nothing_is_written(
    node: Node, devices: list[str], pool: str, expected: str
) -> None:
    ref = node.create(allocated_claim("wrong", devices, pool=pool, driver=DRIVER))

    with node.kubelet.register() as dra:
        answer = dra.prepare([ref]).claims[ref.uid]

    assert expected in answer.error
    assert not answer.devices
    assert not node.cdi_spec(ref).exists()
    assert not node.checkpoint_file.exists()


def test_another_drivers_results_are_skipped(node: Node) -> None:
    claim = allocated_claim("mixed", ["npu-2"], pool="node-1", driver=DRIVER)
    claim["status"]["allocation"]["devices"]["results"].append(
        {"request": "npu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
    )
    ref = node.create(claim)

    with node.kubelet.register() as dra:
        answer = dra.prepare([ref]).claims[ref.uid]

    assert answer.error == ""
    assert [d.device_name for d in answer.devices] == ["npu-2"]


def test_a_claim_only_for_another_driver_prepares_with_no_devices(node: Node) -> None:
    ref = node.create(allocated_claim("other", ["gpu-0"], pool="node-1", driver="gpu.example.com"))

    with node.kubelet.register() as dra:
        answer = dra.prepare([ref]).claims[ref.uid]

    assert answer.error == ""
    assert not answer.devices
    assert not node.cdi_spec(ref).exists()


def test_an_unallocated_claim_is_refused(node: Node) -> None:
    claim = allocated_claim("pending", ["npu-1"], pool="node-1", driver=DRIVER)
    del claim["status"]
    ref = node.create(claim)

    with node.kubelet.register() as dra:
        assert "not allocated" in dra.prepare([ref]).claims[ref.uid].error
