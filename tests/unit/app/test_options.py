"""app/options/: every command's flags declared once, the same names, env vars and defaults
on every command, parsed into one typed Settings."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from npu_dra.app.options import (
    COMMANDS,
    OPTIONS,
    SEARCH_BUDGET,
    Hardware,
    OptionError,
    Settings,
    add_options,
    defaults,
    settings_from,
)
from npu_dra.domain.cdi import Mount
from npu_dra.domain.scheduling.allocator import DEFAULT_STEP_BUDGET

PLUGINS = ("kubelet-plugin", "device-plugin")


def parse(command: str, argv: list[str], environ: dict[str, str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(prog=command)
    add_options(parser, command, environ or {})
    args = parser.parse_args(argv)
    args.command = command
    return settings_from(args)


def test_every_command_takes_only_declared_options_each_once() -> None:
    for command, dests in COMMANDS.items():
        assert len(dests) == len(set(dests)), command
        assert set(dests) <= set(OPTIONS), command
    flags = [flag for option in OPTIONS.values() for flag in option.flags]
    envs = [option.env for option in OPTIONS.values() if option.env]
    assert len(flags) == len(set(flags))
    assert len(envs) == len(set(envs))


def test_options_shared_by_commands_parse_to_the_same_defaults_everywhere() -> None:
    shared = set(COMMANDS["kubelet-plugin"]) & set(COMMANDS["device-plugin"])
    assert {"node_name", "hardware", "npu_smi_path", "dev_root", "health_interval"} <= shared
    kubelet, device = parse("kubelet-plugin", []), parse("device-plugin", [])
    for dest in shared:
        assert getattr(kubelet, dest) == getattr(device, dest), dest
    assert kubelet.health_interval == 10.0
    assert kubelet.cdi_root == device.cdi_root == Path("/var/run/cdi")


def test_kubelet_plugin_defaults_match_the_daemonset_and_the_go_helper() -> None:
    settings = parse("kubelet-plugin", ["--node-name=node-1"])
    assert settings == defaults(
        node_name="node-1",
        registrar_dir=Path("/var/lib/kubelet/plugins_registry"),
        plugins_dir=Path("/var/lib/kubelet/plugins"),
        log_level="info",
    )
    assert (settings.driver_name, settings.hardware) == ("npu.huawei.com", Hardware("auto"))
    assert (settings.healthcheck_port, settings.cluster, settings.kubeconfig) == (
        -1,
        "kubernetes",
        "",
    )
    assert settings.claim_fetch_timeout == 20.0


def test_the_seed_daemonset_args_parse() -> None:
    settings = parse(
        "kubelet-plugin",
        [
            "--node-name=master",
            "--device-profile=npu",
            "--driver-name=npu.huawei.com",
            "--kubelet-registrar-directory-path=/var/lib/kubelet/plugins_registry",
            "--kubelet-plugins-directory-path=/var/lib/kubelet/plugins",
            "--cdi-root=/etc/cdi",
            "--healthcheck-port=-1",
        ],
    )
    assert (settings.cdi_root, settings.node_name) == (Path("/etc/cdi"), "master")


def test_the_node_name_defaults_to_this_hosts_name_on_every_command() -> None:
    import socket

    for command in ("kubelet-plugin", "device-plugin", "discover"):
        assert parse(command, []).node_name == socket.gethostname()
        assert parse(command, [], {"NODE_NAME": "from-env"}).node_name == "from-env"


@pytest.mark.parametrize("command", PLUGINS)
def test_env_vars_fill_in_for_missing_flags_and_flags_win(command: str) -> None:
    environ = {
        "NODE_NAME": "from-env",
        "DRIVER_NAME": "env.example.com",
        "CDI_ROOT": "/env/cdi",
        "HARDWARE": "fake:/env/node.yaml",
        "LOG_LEVEL": "DEBUG",
        "LOG_FORMAT": "json",
        "HEALTH_INTERVAL": "9",
        "NPU_SMI_PATH": "/usr/local/sbin/npu-smi",
        "ASCEND_ROOT": "/opt/Ascend",
    }
    settings = parse(command, ["--driver-name=flag.example.com", "--health-interval=2"], environ)
    assert settings.node_name == "from-env"
    assert settings.driver_name == "flag.example.com"
    assert settings.cdi_root == Path("/env/cdi")
    assert settings.hardware == Hardware("fake", Path("/env/node.yaml"))
    assert (settings.log_level, settings.log_format) == ("debug", "json")
    assert settings.health_interval == 2.0
    assert settings.npu_smi_path == Path("/usr/local/sbin/npu-smi")
    assert settings.ascend_root == Path("/opt/Ascend")


def test_the_older_npu_smi_flag_name_still_works() -> None:
    for flag in ("--npu-smi", "--npu-smi-path"):
        settings = parse("kubelet-plugin", [f"{flag}=/opt/npu-smi"])
        assert settings.npu_smi_path == Path("/opt/npu-smi")


def test_device_plugin_switches_and_mounts_come_from_flags_or_env() -> None:
    environ = {"CDI_ENABLED": "true", "DRIVER_MOUNTS": "/opt/x:/usr/local/x,/opt/y"}
    settings = parse("device-plugin", [], environ)
    assert settings.cdi_enabled
    assert settings.driver_mounts == (Mount("/opt/x", "/usr/local/x"), Mount("/opt/y", "/opt/y"))
    assert not parse("device-plugin", ["--no-cdi-enabled"], environ).cdi_enabled
    assert parse("device-plugin", [], {"RESOURCE_NAME": " a.com/b "}).resource_name == "a.com/b"


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
        "--health-interval=0",
        "--health-interval=soon",
        "--claim-fetch-timeout=45",
        "--claim-fetch-timeout=0",
        "--device-profile=tpu",
        "--host-driver-root=run/nvidia/driver",
    ],
)
def test_invalid_values_are_refused_naming_the_flag(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse("kubelet-plugin", [flag])
    assert flag.split("=")[0] in capsys.readouterr().err


@pytest.mark.parametrize("environ", [{"LOG_LEVEL": "loud"}, {"HEALTHCHECK_PORT": "x"}])
def test_invalid_env_values_are_refused_too(
    environ: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse("kubelet-plugin", [], environ)
    assert next(iter(environ.values())) in capsys.readouterr().err


def test_an_invalid_switch_in_the_environment_names_the_variable() -> None:
    with pytest.raises(OptionError, match="CDI_ENABLED: 'maybe'"):
        parse("device-plugin", [], {"CDI_ENABLED": "maybe"})


def test_a_bad_driver_mount_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("device-plugin", ["--driver-mounts=relative/path"])
    assert "relative/path" in capsys.readouterr().err


def test_the_gpu_profile_defaults_to_nvml_and_our_gpu_driver_name() -> None:
    settings = parse("device-plugin", ["--device-profile=gpu"])
    assert (settings.hardware, settings.driver_name) == (Hardware("nvml"), "gpu.npu-dra.io")
    assert parse("device-plugin", []).driver_name == "npu.huawei.com"


def test_the_driver_roots_host_path_comes_from_its_flag_or_env_and_is_none_when_empty() -> None:
    assert parse("kubelet-plugin", []).host_driver_root is None
    from_env = parse("kubelet-plugin", [], {"HOST_DRIVER_ROOT": "/run/nvidia/driver"})
    assert from_env.host_driver_root == Path("/run/nvidia/driver")
    from_flag = parse("discover", ["--host-driver-root=/opt/driver"], {"HOST_DRIVER_ROOT": "/x"})
    assert from_flag.host_driver_root == Path("/opt/driver")


@pytest.mark.parametrize(("profile", "hardware"), [("gpu", "npu-smi"), ("npu", "nvml")])
def test_a_real_backend_of_another_vendor_is_refused(profile: str, hardware: str) -> None:
    with pytest.raises(OptionError, match=f"--hardware {hardware} .*--device-profile"):
        parse("kubelet-plugin", [f"--device-profile={profile}", f"--hardware={hardware}"])


def test_the_one_shot_commands_log_warnings_by_default_the_plugins_info() -> None:
    assert parse("discover", []).log_level == "warning"
    assert parse("simulate", []).log_level == "warning"
    assert parse("kubelet-plugin", []).log_level == "info"
    assert parse("simulate", ["--log-level=debug"]).log_level == "debug"


def test_simulate_options_and_the_schedulers_search_budget() -> None:
    settings = parse("simulate", ["--no-prepare", "-o", "yaml", "--cdi-out=/tmp/x"])
    assert (settings.prepare, settings.output, settings.cdi_out) == (False, "yaml", Path("/tmp/x"))
    assert settings.search_budget == SEARCH_BUDGET == DEFAULT_STEP_BUDGET


def test_help_names_each_env_var_and_default() -> None:
    parser = argparse.ArgumentParser()
    add_options(parser, "kubelet-plugin", {})
    text = " ".join(parser.format_help().split())
    for dest in COMMANDS["kubelet-plugin"]:
        option = OPTIONS[dest]
        assert option.flag in text
        if option.env:
            assert f"env {option.env}" in text
