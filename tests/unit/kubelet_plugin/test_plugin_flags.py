"""Flags of `npu-dra kubelet-plugin`: defaults, env fallbacks, validation, the config dict."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.app.container import NodeContainer
from npu_dra.app.kubelet_plugin.flags import Hardware, Settings, add_arguments


def parse(argv: list[str], environ: dict[str, str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(prog="kubelet-plugin")
    add_arguments(parser, environ or {})
    return Settings.from_args(parser.parse_args(argv))


def test_defaults_match_the_daemonset_and_the_go_helper() -> None:
    settings = parse(["--node-name=node-1"])

    assert settings == Settings(
        node_name="node-1",
        device_profile="npu",
        driver_name="npu.huawei.com",
        registrar_dir=Path("/var/lib/kubelet/plugins_registry"),
        plugins_dir=Path("/var/lib/kubelet/plugins"),
        cdi_root=Path("/var/run/cdi"),
        healthcheck_port=-1,
        kubeconfig="",
        hardware=Hardware("npu_smi"),
        npu_smi="/usr/local/bin/npu-smi",
        health_interval=10.0,
        log_level="info",
        log_format="text",
        cluster="kubernetes",
    )


def test_the_seed_daemonset_args_parse() -> None:
    settings = parse(
        [
            "--node-name=master",
            "--device-profile=npu",
            "--driver-name=npu.huawei.com",
            "--kubelet-registrar-directory-path=/var/lib/kubelet/plugins_registry",
            "--kubelet-plugins-directory-path=/var/lib/kubelet/plugins",
            "--cdi-root=/etc/cdi",
            "--healthcheck-port=-1",
        ]
    )

    assert settings.cdi_root == Path("/etc/cdi")
    assert settings.node_name == "master"


def test_env_vars_fill_in_for_missing_flags_and_flags_win() -> None:
    environ = {
        "NODE_NAME": "from-env",
        "DRIVER_NAME": "env.example.com",
        "CDI_ROOT": "/env/cdi",
        "HEALTHCHECK_PORT": "8081",
        "HARDWARE": "fake:/env/node.yaml",
        "LOG_LEVEL": "DEBUG",
        "LOG_FORMAT": "json",
        "KUBELET_REGISTRAR_DIRECTORY_PATH": "/env/registry",
    }

    settings = parse(["--driver-name=flag.example.com"], environ)

    assert settings.node_name == "from-env"
    assert settings.driver_name == "flag.example.com"
    assert settings.cdi_root == Path("/env/cdi")
    assert settings.healthcheck_port == 8081
    assert settings.hardware == Hardware("fake", Path("/env/node.yaml"))
    assert (settings.log_level, settings.log_format) == ("debug", "json")
    assert settings.registrar_dir == Path("/env/registry")


def test_node_name_is_required_without_its_env_var(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse([])

    assert "--node-name" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flag",
    [
        "--hardware=gpu",
        "--hardware=fake:",
        "--healthcheck-port=70000",
        "--healthcheck-port=-2",
        "--healthcheck-port=http",
        "--log-format=xml",
        "--cluster=etcd",
    ],
)
def test_invalid_values_are_refused(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["--node-name=n", flag])

    assert flag.split("=")[0] in capsys.readouterr().err


@pytest.mark.parametrize("environ", [{"LOG_LEVEL": "loud"}, {"HEALTHCHECK_PORT": "x"}])
def test_invalid_env_values_are_refused_too(
    environ: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse(["--node-name=n"], environ)

    assert next(iter(environ.values())) in capsys.readouterr().err


def test_config_maps_flags_onto_the_container_keys() -> None:
    settings = parse(
        ["--node-name=node-1", "--hardware=fake:/n.yaml", "--cluster=memory", "--cdi-root=/c"]
    )

    config = settings.config()

    assert config["node_name"] == "node-1"
    assert config["hardware"]["kind"] == "fake"
    assert config["hardware"]["fake_file"] == "/n.yaml"
    assert config["state"] == {"kind": "files"}
    assert config["cluster"]["kind"] == "memory"
    assert config["cdi_root"] == "/c"
    assert config["plugins_dir"] == "/var/lib/kubelet/plugins"
    assert config["registrar_dir"] == "/var/lib/kubelet/plugins_registry"
    assert config["healthcheck_port"] == -1


def test_host_paths_flow_into_the_hardware_config() -> None:
    settings = parse(
        ["--node-name=n", "--dev-root=/tmp/node/dev", "--npu-smi=/opt/npu-smi"],
        {"ASCEND_ROOT": "/opt/Ascend", "DCMI_DIR": "/opt/dcmi", "ASCEND_INSTALL_INFO": "/opt/i"},
    )

    hardware = settings.config()["hardware"]

    assert hardware["dev_root"] == "/tmp/node/dev"
    assert hardware["npu_smi_path"] == "/opt/npu-smi"
    assert hardware["ascend_root"] == "/opt/Ascend"
    assert hardware["dcmi_dir"] == "/opt/dcmi"
    assert hardware["install_info"] == "/opt/i"


def test_host_path_defaults_are_the_ascend_install_layout() -> None:
    settings = parse(["--node-name=n"])

    assert settings.dev_root == Path("/dev")
    assert settings.ascend_root == Path("/usr/local/Ascend")
    assert settings.dcmi_dir == Path("/usr/local/dcmi")
    assert settings.ascend_install_info == Path("/etc/ascend_install.info")


def test_fake_hardware_on_a_test_node_reports_its_dev_root_and_npu_smi(tmp_path: Path) -> None:
    """The real-node e2e runs fake hardware over mknod-made nodes: the flags must reach it."""
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4\ncount: 2\n")
    npu_smi = tmp_path / "npu-smi"
    npu_smi.write_text("#!/bin/sh\n")
    settings = parse(
        [
            "--node-name=n",
            f"--hardware=fake:{description}",
            f"--dev-root={tmp_path / 'dev'}",
            f"--npu-smi={npu_smi}",
            f"--ascend-root={tmp_path / 'absent'}",
        ]
    )
    container = NodeContainer(cluster=MemoryCluster())
    container.config.from_dict(settings.config())

    host = container.hardware().probe().host

    assert host.dev_root == str(tmp_path / "dev")
    assert [(f.host_path, f.container_path) for f in host.driver_files] == [
        (str(npu_smi), "/usr/local/bin/npu-smi")
    ]


def test_the_gpu_profile_defaults_to_nvml_and_our_gpu_driver_name() -> None:
    settings = parse(["--node-name=n", "--device-profile=gpu"])

    assert settings.driver_name == "gpu.npu-dra.io"
    assert settings.hardware == Hardware("nvml")
    assert settings.driver_root == Path("/")


def test_a_gpu_node_description_under_the_npu_profile_does_not_start(tmp_path: Path) -> None:
    from npu_dra.adapters.hardware.errors import ProbeError

    description = tmp_path / "node.yaml"
    description.write_text("gpu: NVIDIA A100-SXM4-80GB\ncount: 2\n")
    settings = parse(["--node-name=n", f"--hardware=fake:{description}", "--cluster=memory"])
    container = NodeContainer(cluster=MemoryCluster())
    container.config.from_dict(settings.config())

    with pytest.raises(ProbeError, match="--device-profile=gpu"):
        container.hardware().probe()


def test_the_claim_fetch_timeout_defaults_below_the_kubelets_45s_and_reaches_the_config() -> None:
    assert parse(["--node-name=n"]).claim_fetch_timeout == 20.0
    settings = parse(["--node-name=n"], {"CLAIM_FETCH_TIMEOUT": "5"})
    assert settings.config()["claim_fetch_timeout_s"] == 5.0


@pytest.mark.parametrize("value", ["45", "60", "0", "soon"])
def test_a_claim_fetch_timeout_the_kubelet_would_not_wait_for_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse(["--node-name=n", f"--claim-fetch-timeout={value}"])
    assert "--claim-fetch-timeout" in capsys.readouterr().err
