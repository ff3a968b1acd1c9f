"""What npu-dra published on a real H100 (the fixture npu-dra-discover-and-contract_H100.txt,
recorded on a lent GPU machine) is what the fake NVML replaying a real H100's `nvidia-smi -q -x`
publishes: the fake stands for the real library, attribute for attribute."""

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nvml"
REAL_RUN = FIXTURES / "npu-dra-discover-and-contract_H100.txt"
DIFFERS_PER_MACHINE = {"uuid"}  # the recording and the real run were two VMs with one H100 each
# Published by every device since the recording was made (domain/device_kinds: the kind a class
# selects on), with the value the profile gives a whole GPU; no lent machine to record again.
ADDED_SINCE_RECORDING = {"type": {"string": "gpu"}}


def recorded_discover() -> dict[str, Any]:
    text = REAL_RUN.read_text().split("== npu-dra discover --device-profile=gpu\n", 1)[1]
    document: dict[str, Any] = yaml.safe_load(text.split("\nNAME ", 1)[0])
    return document


def fake_discover(tmp_path: Path) -> dict[str, Any]:
    node = tmp_path / "gpu-node.yaml"
    node.write_text(
        yaml.safe_dump(
            {
                "nvidiaSmiXml": str(FIXTURES / "nvidia-smi-q-x_H100.xml"),
                "nvmlDump": str(FIXTURES / "nvml-dump_H100.json"),
            }
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "npu_dra.app.cli", "discover", "--device-profile=gpu",
         f"--hardware=fake:{node}", "--node-name=vm", "-o", "yaml"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = yaml.safe_load(result.stdout)
    return document


def devices(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for s in document["resourceSlices"] for d in s["spec"]["devices"]]


def test_the_real_h100_run_passed_the_contract_and_published_one_gpu() -> None:
    text = REAL_RUN.read_text()
    assert "8 passed, 2 skipped" in text
    assert "FAILED" not in text
    [gpu] = devices(recorded_discover())
    assert gpu["name"] == "gpu-0"


def test_the_fake_nvml_publishes_what_the_real_one_did(tmp_path: Path) -> None:
    [real] = devices(recorded_discover())
    [fake] = devices(fake_discover(tmp_path))
    assert fake["name"] == real["name"]
    assert fake["capacity"] == real["capacity"]
    assert set(fake["attributes"]) == set(real["attributes"]) | set(ADDED_SINCE_RECORDING)
    assert all(fake["attributes"][k] == v for k, v in ADDED_SINCE_RECORDING.items())
    for name, value in real["attributes"].items():
        if name not in DIFFERS_PER_MACHINE:
            assert fake["attributes"][name] == value, name
