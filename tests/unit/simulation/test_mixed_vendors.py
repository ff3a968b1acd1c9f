"""One simulated cluster with an Ascend node and an NVIDIA node: each node publishes under its
profile's driver, each pod is allocated on its vendor's node, and each prepared claim gets its
vendor's CDI content (davinci nodes and ASCEND_VISIBLE_DEVICES, or nvidia nodes and the GPUs'
uuids in NVIDIA_VISIBLE_DEVICES)."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCENARIO = Path(__file__).with_name("mixed_vendors.yaml")


def simulate() -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "npu_dra.app.cli", "simulate", "--scenario", str(SCENARIO),
         "-o", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    output: dict[str, Any] = json.loads(result.stdout)
    return output


def test_each_node_publishes_under_its_vendor_s_driver() -> None:
    slices = simulate()["resourceSlices"]
    published = {
        (s["spec"]["nodeName"], s["spec"]["driver"]): sorted(
            d["name"] for d in s["spec"]["devices"]
        )
        for s in slices
    }
    assert published == {
        ("gpu-node", "gpu.npu-dra.io"): ["gpu-0", "gpu-1", "gpu-2", "gpu-3"],
        ("npu-node", "npu.huawei.com"): [f"npu-{n}" for n in range(8)],
    }


def test_each_pod_lands_on_its_vendor_s_node_with_its_vendor_s_cdi_content() -> None:
    output = simulate()
    rows = {(r["pod"], r["node"], r["device"], r["status"]) for r in output["allocations"]}
    assert rows == {
        ("default/trainer", "gpu-node", "gpu-0", "Prepared"),
        ("default/trainer", "gpu-node", "gpu-1", "Prepared"),
        ("default/infer", "npu-node", "npu-0", "Prepared"),
    }
    specs = {spec["kind"]: spec for spec in output["cdiSpecs"].values()}
    assert set(specs) == {"k8s.gpu.npu-dra.io/gpu", "k8s.npu.huawei.com/npu"}
    gpu, npu = specs["k8s.gpu.npu-dra.io/gpu"], specs["k8s.npu.huawei.com/npu"]
    assert [n["path"] for d in gpu["devices"] for n in d["containerEdits"]["deviceNodes"]] == [
        "/dev/nvidia0",
        "/dev/nvidia1",
    ]
    [gpu_env] = [e for e in gpu["containerEdits"]["env"] if e.startswith("NVIDIA_VISIBLE")]
    assert gpu_env.count("GPU-") == 2
    assert [n["path"] for d in npu["devices"] for n in d["containerEdits"]["deviceNodes"]] == [
        "/dev/davinci0"
    ]
    assert "ASCEND_VISIBLE_DEVICES=0" in npu["containerEdits"]["env"]
