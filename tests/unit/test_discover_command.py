"""`npu-dra discover`: what a node would publish, from a node description or the fake npu-smi."""

import json
from pathlib import Path

import pytest
import yaml

from npu_dra.app.cli import main
from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs

TESTS = Path(__file__).resolve().parents[1]

DESCRIPTION = "chip: 910B4\ncount: 8\nnumaNodes: [6, 6, 4, 4, 0, 0, 2, 2]\nhealth: {3: Alarm}\n"


def discover(*argv: str) -> int:
    """The exit status of `npu-dra discover ARGV`, as the CLI gives it."""
    try:
        return main(["discover", *argv])
    except SystemExit as exited:  # argparse refused a flag
        return int(exited.code or 0)


@pytest.fixture
def description(tmp_path: Path) -> Path:
    path = tmp_path / "node.yaml"
    path.write_text(DESCRIPTION)
    return path


def test_yaml_lists_devices_with_health_and_the_slices_as_the_api_stores_them(
    description: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert discover("--hardware", f"fake:{description}", "--node-name", "node-a") == 0
    report = yaml.safe_load(capsys.readouterr().out)
    assert (report["node"], report["driver"]) == ("node-a", "npu.huawei.com")
    assert report["backend"] == "fake"
    assert report["devices"][2:4] == [
        {"name": "npu-2", "health": "Healthy", "published": True},
        {"name": "npu-3", "health": "Unhealthy", "published": False},
    ]
    (resource_slice,) = report["resourceSlices"]
    assert resource_slice["kind"] == "ResourceSlice"
    assert resource_slice["spec"]["pool"] == {
        "name": "node-a",
        "generation": 1,
        "resourceSliceCount": 1,
    }
    devices = resource_slice["spec"]["devices"]
    assert [d["name"] for d in devices] == [f"npu-{n}" for n in (0, 1, 2, 4, 5, 6, 7)]
    assert devices[0]["attributes"]["chipName"] == {"string": "910B4"}
    assert devices[0]["attributes"]["numaNode"] == {"int": 6}
    assert devices[0]["attributes"]["topologyGroup"] == {"string": "ring-0"}
    assert devices[0]["capacity"]["memCapacity"] == {"value": "32Gi"}


def test_node_name_from_the_environment_and_a_driver_name(
    description: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NODE_NAME", "from-env")
    argv = ("--hardware", f"fake:{description}", "--driver-name", "npu.example.com", "-o", "json")
    assert discover(*argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["node"] == "from-env"
    assert report["resourceSlices"][0]["spec"]["driver"] == "npu.example.com"


def test_table_through_the_fake_npu_smi(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeNpuSmi.from_scenario("910B3_8npu", tmp_path / "npu-smi")
    roots = ["--dev-root", str(make_dev_root(tmp_path / "dev", range(8)))]
    roots += ["--sysfs-root", str(make_sysfs(tmp_path / "sys"))]
    argv = ("--npu-smi", str(fake.path), *roots, "--node-name", "node-a", "-o", "table")
    assert discover(*argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "NAME", "HEALTH", "PUBLISHED", "CHIP", "CARD/CHIP", "LOGIC", "NUMA", "GROUP",
        "MEMORY", "AICORES", "PCI", "BUS",
    ]  # fmt: skip
    assert lines[1].split() == [
        "npu-0", "Healthy", "yes", "910B3", "0/0", "0", "6", "ring-0", "64Gi", "20", "0000:c1:00.0"
    ]  # fmt: skip
    assert lines[-1] == (
        "node-a: 8 devices, 8 published in 1 ResourceSlice(s), read through npu_smi "
        "(--hardware auto)"
    )


def test_npu_smi_path_from_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeNpuSmi.from_scenario("310P3_300IDuo_3cards", tmp_path / "npu-smi")
    monkeypatch.setenv("NPU_SMI_PATH", str(fake.path))
    dev = make_dev_root(tmp_path / "dev", range(6))
    assert discover("--dev-root", str(dev), "--sysfs-root", str(tmp_path), "-o", "json") == 0
    report = json.loads(capsys.readouterr().out)
    devices = report["resourceSlices"][0]["spec"]["devices"]
    # npu-3 (chip 1 of NPU 96) is in Alarm: listed, not published
    assert [d["attributes"]["cardId"]["int"] for d in devices] == [
        0,
        0,
        96,
        32768,
        32768,
    ]  # fmt: skip
    assert fake.calls()
    # `auto` (the default) says what it took: no libdcmi.so here, so npu-smi.
    assert report["backend"] == "npu_smi"


def test_probe_error_is_one_line_and_exit_status_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "npu-smi")
    fake.set_answer(["info"], garbage="garbage line")
    assert discover("--npu-smi", str(fake.path), "--dev-root", str(tmp_path)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("npu-dra discover: `npu-smi info` line 25: not part of the npu-smi")


def test_missing_npu_smi_and_bad_description_fail_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert discover("--npu-smi", str(tmp_path / "absent")) == 1
    assert "cannot run" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("chip: [910B4\n")
    assert discover("--hardware", f"fake:{bad}") == 1
    assert capsys.readouterr().err.count("\n") == 1
    assert discover("--hardware", "gpu") == 2  # refused as a bad flag, before any probe
    assert "expected auto, dcmi, npu-smi, nvml or fake:FILE" in capsys.readouterr().err


def test_gpu_profile_prints_a_recorded_h100_with_our_driver_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = TESTS / "fixtures" / "nvml"
    node = tmp_path / "gpu-node.yaml"
    node.write_text(
        f"nvidiaSmiXml: {fixtures / 'nvidia-smi-q-x_H100.xml'}\n"
        f"nvmlDump: {fixtures / 'nvml-dump_H100.json'}\n"
    )
    argv = ("--device-profile=gpu", "--hardware", f"fake:{node}", "--node-name", "gpu-node")
    assert discover(*argv, "-o", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["driver"] == "gpu.npu-dra.io"
    [device] = report["resourceSlices"][0]["spec"]["devices"]
    assert device["name"] == "gpu-0"
    assert device["attributes"]["uuid"] == {"string": "GPU-c4a99447-5dcb-8716-f7a2-6c7507bc0582"}
    assert device["attributes"]["cudaComputeCapability"] == {"version": "9.0.0"}
    assert device["capacity"]["memory"] == {"value": "81559Mi"}
    assert report["host"]["sharedDeviceNodes"] == ["nvidia-uvm", "nvidia-uvm-tools", "nvidiactl"]


def test_a_gpu_node_under_the_npu_profile_is_refused_naming_the_profile_to_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = tmp_path / "gpu-node.yaml"
    node.write_text("gpu: NVIDIA A100-SXM4-80GB\ncount: 2\n")
    assert discover("--device-profile=npu", "--hardware", f"fake:{node}") == 1
    assert "--device-profile=gpu" in capsys.readouterr().err
    assert discover("--device-profile=gpu", "--hardware", "npu-smi") == 2
    assert "--device-profile=npu" in capsys.readouterr().err
