"""The device plugin DaemonSet agrees with the code: its env vars, paths, command and probe."""

import argparse
import importlib
from pathlib import Path
from typing import Any

import yaml

from npu_dra.app.commands import device_plugin as command
from npu_dra.app.options import COMMANDS, OPTIONS, Hardware, add_options, settings_from

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "device-plugin" / "daemonset.yaml"
NOT_FLAGS = {"LD_LIBRARY_PATH"}  # for npu-smi's libraries, not for us


def container() -> dict[str, Any]:
    daemonset = yaml.safe_load(MANIFEST.read_text())
    assert daemonset["kind"] == "DaemonSet"
    (only,) = daemonset["spec"]["template"]["spec"]["containers"]
    return only


def env_of(spec: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "node-from-field-ref") for e in spec["env"]}


def flag_env_vars() -> set[str]:
    return {env for d in COMMANDS["device-plugin"] if (env := OPTIONS[d].env) is not None}


def test_every_env_var_is_one_the_flags_read_and_they_parse() -> None:
    env = env_of(container())
    assert set(env) - NOT_FLAGS <= flag_env_vars()
    parser = argparse.ArgumentParser()
    add_options(parser, "device-plugin", env)
    config = settings_from(parser.parse_args([]))
    assert config.hardware == Hardware("auto")
    assert not config.cdi_enabled


def test_the_kubelet_directory_is_mounted_where_the_plugin_serves() -> None:
    spec = container()
    mounts = {m["mountPath"] for m in spec["volumeMounts"]}
    env = env_of(spec)
    assert env["DEVICE_PLUGIN_PATH"] in mounts
    assert {env["NPU_SMI_PATH"], env["CDI_ROOT"], "/dev", "/usr/local/Ascend"} <= mounts
    lock_dir = settings_from(argparse.ArgumentParser().parse_args([])).api_lock_dir
    assert str(lock_dir) in mounts  # the DRA plugin's DaemonSet mounts the same host directory
    assert spec["securityContext"]["privileged"] is True


def test_command_and_liveness_name_code_that_exists() -> None:
    spec = container()
    subparsers = argparse.ArgumentParser().add_subparsers()
    command.register(subparsers)
    assert spec["command"] == ["npu-dra", *subparsers.choices]
    probe = spec["livenessProbe"]["exec"]["command"]
    assert probe[:2] == ["python", "-m"]
    assert callable(importlib.import_module(probe[2]).main)
    assert probe[3] == env_of(spec)["DEVICE_PLUGIN_PATH"]
