"""`npu-dra simulate` on hostile scenarios: typos inside a node's hardware, sizes no cluster has,
binary files. Each ends quickly, under a 2 GiB memory limit, with one message naming the file,
the object and the field (no traceback): exit status 2 for a file refused whole, 4 for a node
left out (the rest of the scenario runs)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

MEMORY_LIMIT = 2 << 30
NODE = """\
kind: SimulatedNode
metadata: {{name: {name}}}
spec:
  hardware: {hardware}
"""


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def simulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "npu_dra.app.cli", "simulate", "--no-prepare", *args],
        capture_output=True, text=True, timeout=120, check=False, preexec_fn=limited,
    )  # fmt: skip


LEFT_OUT = 4


def refused(result: subprocess.CompletedProcess[str], *words: str, code: int = 2) -> str:
    assert result.returncode == code, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    return result.stderr


def scenario(tmp_path: Path, text: str) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("hardware", "typo"),
    [
        ("{chip: 910B4, count: 8, nuamNodes: [0, 0, 0, 0, 1, 1, 1, 1]}", "nuamNodes"),
        ("{chip: 910A, count: 8, topolgy: rings}", "topolgy"),
        ("{gpu: NVIDIA H100 80GB HBM3, count: 4, computeCapabilty: '9.0'}", "computeCapabilty"),
    ],
)
def test_a_typo_inside_a_nodes_hardware_is_refused_naming_it(
    tmp_path: Path, hardware: str, typo: str
) -> None:
    path = scenario(tmp_path, NODE.format(name="n1", hardware=hardware))
    result = simulate("--scenario", path)
    refused(result, path, "SimulatedNode n1", typo, "unknown field", code=LEFT_OUT)


@pytest.mark.parametrize("count", [100_000_000, 1025, 0, -3])
def test_a_device_count_no_node_has_is_refused(tmp_path: Path, count: int) -> None:
    path = scenario(tmp_path, NODE.format(name="n1", hardware=f"{{chip: 910B4, count: {count}}}"))
    refused(simulate("--scenario", path), "SimulatedNode n1", "count", "1024", code=LEFT_OUT)


def test_more_nodes_than_kubernetes_supports_are_refused(tmp_path: Path) -> None:
    nodes = "---\n".join(
        NODE.format(name=f"n{i}", hardware="{chip: 910B4, count: 1}") for i in range(5001)
    )
    refused(simulate("--scenario", scenario(tmp_path, nodes)), "5001 SimulatedNode", "5000")


@pytest.mark.parametrize(
    ("spec", "limit"), [("nodes=5001", "5000"), ("pods=150001", "150000"), ("npus=2000", "1024")]
)
def test_a_generated_scenario_is_bounded_alike(spec: str, limit: str) -> None:
    refused(simulate("--generate", spec), "--generate", limit)


def test_a_binary_file_is_refused_as_not_text(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 64)
    refused(simulate("--scenario", str(path)), str(path), "UTF-8")


def test_a_directory_or_a_missing_file_is_refused(tmp_path: Path) -> None:
    refused(simulate("--scenario", str(tmp_path)), str(tmp_path))
    refused(simulate("--scenario", str(tmp_path / "absent.yaml")), "absent.yaml")


A3_WITH_VNPUS = """\
kind: SimulatedNode
metadata: {name: a3}
spec: {hardware: {chip: 910B4, count: 16, vnpu: 910B4}}
---
kind: DeviceClass
metadata: {name: npu.huawei.com}
spec: {selectors: [{cel: {expression: 'device.driver == "npu.huawei.com"'}}]}
---
kind: ResourceClaim
metadata: {name: many, namespace: demo}
spec: {devices: {requests: [{name: npu, exactly: {deviceClassName: npu.huawei.com, count: 20}}]}}
---
kind: Pod
metadata: {name: p, namespace: demo}
spec:
  resourceClaims: [{name: c, resourceClaimName: many}]
  containers: [{name: app, image: busybox}]
"""


def test_a_sixteen_chip_node_of_vnpus_is_decided_within_the_memory_limit(tmp_path: Path) -> None:
    # One slice per chip: listing every order of 16 slices before capping them reached 23 GB.
    # vNPUs are offered where the server keeps counters (DRAPartitionableDevices).
    gates = ("--feature-gates", "DRAPartitionableDevices=true")
    result = simulate("--scenario", scenario(tmp_path, A3_WITH_VNPUS), *gates)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.rstrip().endswith("# 1 pods: 1 bound, 0 pending, 0 gated, 0 error")


CLAIM_WITH_PARAMETERS = """\
kind: SimulatedNode
metadata: {{name: n1}}
spec: {{hardware: {{chip: 910B4, count: 8}}}}
---
kind: ResourceClaim
metadata: {{name: c, namespace: demo}}
spec:
  devices:
    requests: [{{name: npu, exactly: {{deviceClassName: npu.huawei.com}}}}]
    config:
    - opaque:
        driver: other.example.com
        parameters: {parameters}
"""


def alias_bomb(levels: int = 9) -> str:
    """About 2 kB of YAML that expands to 10**levels strings: each anchor aliased ten times."""
    anchors = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    anchors += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "{" + ", ".join(anchors) + "}"


def test_an_alias_bomb_in_claim_parameters_is_refused_fast(tmp_path: Path) -> None:
    text = CLAIM_WITH_PARAMETERS.format(parameters=alias_bomb())
    assert len(text) < 3000
    path = scenario(tmp_path, text)
    refused(simulate("--scenario", path), path, "document 2", "aliases", "expand")


def test_an_alias_bomb_in_a_snapshot_is_refused_fast(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "kind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n"
        "- apiVersion: resource.k8s.io/v1\n  kind: ResourceClaim\n"
        "  metadata: {name: c, namespace: demo, uid: u1}\n"
        "  spec:\n    devices:\n      requests: [{name: r, exactly: {deviceClassName: other}}]\n"
        f"      config: [{{opaque: {{driver: other.example.com, parameters: {alias_bomb()}}}}}]\n"
    )
    refused(simulate("--from", str(path)), str(path), "aliases", "expand")


def test_an_alias_that_refers_to_itself_is_refused(tmp_path: Path) -> None:
    path = scenario(tmp_path, CLAIM_WITH_PARAMETERS.format(parameters="&loop {again: *loop}"))
    refused(simulate("--scenario", path), path, "document 2", "refers to itself")


SHARED_BY_AN_ANCHOR = """\
kind: ResourceClaim
metadata: {name: two, namespace: demo}
spec:
  devices:
    requests:
    - {name: a, exactly: &npu {deviceClassName: npu.huawei.com}}
    - {name: b, exactly: *npu}
---
kind: Pod
metadata: {name: p, namespace: demo}
spec:
  resourceClaims: [{name: c, resourceClaimName: two}]
  containers: [{name: app, image: busybox}]
"""


def test_anchors_as_a_scenario_uses_them_still_load(tmp_path: Path) -> None:
    text = A3_WITH_VNPUS.split("---\nkind: ResourceClaim")[0] + "---\n" + SHARED_BY_AN_ANCHOR
    result = simulate("--scenario", scenario(tmp_path, text))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.rstrip().endswith("# 1 pods: 1 bound, 0 pending, 0 gated, 0 error")


SNAPSHOT_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "demo", "uid": "u1"},
    "spec": {
        "devices": {
            "requests": [{"name": "r", "exactly": {"deviceClassName": "other"}}],
            "config": [{"opaque": {"driver": "other.example.com", "parameters": "DEEP"}}],
        }
    },
}


def deep_snapshot(tmp_path: Path, depth: int) -> str:
    """A cluster's snapshot as `kubectl get -o json` prints it, one claim of another driver
    holding parameters nested `depth` levels deep (the API server takes up to 10,000)."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    document = {"apiVersion": "v1", "kind": "List", "items": [node, SNAPSHOT_CLAIM]}
    deep = '{"p": ' + "[" * depth + "]" * depth + "}"
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(document).replace('"DEEP"', deep))
    return str(path)


def test_deep_parameters_of_another_driver_in_a_snapshot_are_taken_as_they_are(
    tmp_path: Path,
) -> None:
    # 5,000 levels: the most that fit in the API server's 10 KiB of parameters.
    result = simulate("--from", deep_snapshot(tmp_path, 5000), "-o", "yaml")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr


def test_json_nested_deeper_than_the_api_server_takes_is_refused(tmp_path: Path) -> None:
    path = deep_snapshot(tmp_path, 100_000)
    refused(simulate("--from", path), path, "nested deeper than 10000 levels")
