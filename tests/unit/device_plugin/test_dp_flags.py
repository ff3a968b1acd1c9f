"""Every flag falls back to its environment variable, and bad values name the flag."""

import argparse
from pathlib import Path

import pytest

from npu_dra.adapters.grpc.device_plugin.allocate import DriverMount
from npu_dra.app.device_plugin.flags import DevicePluginConfig, add_flags, config_from


def parse(argv: list[str], env: dict[str, str] | None = None) -> DevicePluginConfig:
    parser = argparse.ArgumentParser()
    add_flags(parser, env or {})
    return config_from(parser.parse_args(argv))


def test_defaults_match_the_kubelet_and_the_seed() -> None:
    config = parse([], {"NODE_NAME": "node-a"})
    assert config.node_name == "node-a"
    assert config.plugin_dir == Path("/var/lib/kubelet/device-plugins")
    assert config.health_interval == 5.0
    assert config.hardware == "npu-smi"
    assert config.npu_smi_path == Path("/usr/local/bin/npu-smi")
    assert not config.cdi_enabled
    assert config.driver_mounts == ()  # the driver files come from the probe
    assert config.dev_root == Path("/dev")
    assert config.ascend_root == Path("/usr/local/Ascend")
    assert config.dcmi_dir == Path("/usr/local/dcmi")
    assert config.ascend_install_info == Path("/etc/ascend_install.info")


def test_host_paths_and_extra_mounts_come_from_flags_or_env() -> None:
    config = parse(
        ["--dev-root", "/tmp/node/dev", "--driver-mounts", "/opt/x:/usr/local/x"],
        {"ASCEND_ROOT": "/opt/Ascend", "DCMI_DIR": "/opt/dcmi", "ASCEND_INSTALL_INFO": "/i"},
    )
    assert (config.dev_root, config.ascend_root) == (Path("/tmp/node/dev"), Path("/opt/Ascend"))
    assert (config.dcmi_dir, config.ascend_install_info) == (Path("/opt/dcmi"), Path("/i"))
    assert config.driver_mounts == (DriverMount("/opt/x", "/usr/local/x"),)


def test_environment_variables_fill_in_for_flags() -> None:
    env = {
        "DEVICE_PLUGIN_PATH": "/tmp/dp",
        "RESOURCE_NAME": "example.com/npu",
        "HEALTH_INTERVAL": "0.5",
        "CDI_ENABLED": "true",
        "CDI_ROOT": "/var/run/cdi",
        "HARDWARE": "fake:/etc/node.yaml",
        "NPU_SMI_PATH": "/usr/local/sbin/npu-smi",
        "LOG_LEVEL": "debug",
    }
    config = parse([], env)
    assert config.plugin_dir == Path("/tmp/dp")
    assert config.resource_names == "example.com/npu"
    assert config.health_interval == 0.5
    assert config.cdi_enabled
    assert config.cdi_root == Path("/var/run/cdi")
    assert config.hardware == "fake:/etc/node.yaml"
    assert config.npu_smi_path == Path("/usr/local/sbin/npu-smi")
    assert config.log_level == "DEBUG"


def test_flags_win_over_the_environment() -> None:
    env = {"HEALTH_INTERVAL": "9", "CDI_ENABLED": "1"}
    config = parse(["--health-interval", "2", "--no-cdi-enabled"], env)
    assert (config.health_interval, config.cdi_enabled) == (2.0, False)


@pytest.mark.parametrize("interval", ["0", "-1", "soon"])
def test_a_bad_health_interval_names_the_flag(interval: str) -> None:
    with pytest.raises(ValueError, match="--health-interval"):
        parse(["--health-interval", interval])


def test_the_gpu_profile_defaults_to_nvml_and_our_gpu_driver_name() -> None:
    config = parse(["--device-profile", "gpu"], {"NODE_NAME": "node-a"})
    assert (config.hardware, config.driver_name) == ("nvml", "gpu.npu-dra.io")
    assert parse([], {"NODE_NAME": "node-a"}).driver_name == "npu.huawei.com"


@pytest.mark.parametrize(("profile", "hardware"), [("gpu", "npu-smi"), ("npu", "nvml")])
def test_a_real_backend_of_another_vendor_is_refused(profile: str, hardware: str) -> None:
    with pytest.raises(ValueError, match=f"--hardware {hardware} .*--device-profile"):
        parse(["--device-profile", profile, "--hardware", hardware], {"NODE_NAME": "n"})
