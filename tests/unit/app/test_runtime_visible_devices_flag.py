"""`--runtime-visible-devices` (env RUNTIME_VISIBLE_DEVICES): what ASCEND_RT_VISIBLE_DEVICES
gets in containers (domain/profile.py gives the rule and its sources), read by the kubelet plugin
and the classic device plugin alike and reaching what each hands a container."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from npu_dra.adapters.grpc.gen.deviceplugin.v1beta1 import api_pb2 as api
from npu_dra.app.container import container_for
from npu_dra.app.device_plugin.assembly import assemble
from npu_dra.app.options import Hardware, Settings, add_options, defaults, settings_from
from npu_dra.app.options.kubelet import RUNTIME_VISIBLE_DEVICES_MODES
from npu_dra.domain.profile import RUNTIME_IDS


def parse(command: str, argv: list[str], environ: dict[str, str]) -> Settings:
    parser = argparse.ArgumentParser(prog=command)
    add_options(parser, command, environ)
    args = parser.parse_args(argv)
    args.command = command
    return settings_from(args)


@pytest.mark.parametrize("command", ["kubelet-plugin", "device-plugin"])
def test_both_plugins_take_the_flag_and_its_variable(command: str) -> None:
    assert parse(command, [], {}).runtime_visible_devices == "unset"
    environ = {"RUNTIME_VISIBLE_DEVICES": "container"}
    assert parse(command, [], environ).runtime_visible_devices == "container"
    flagged = parse(command, ["--runtime-visible-devices=unset"], environ)
    assert flagged.runtime_visible_devices == "unset"


def test_a_mode_it_does_not_know_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        parse("kubelet-plugin", ["--runtime-visible-devices=host"], {})
    assert "--runtime-visible-devices" in capsys.readouterr().err


def test_the_flag_offers_exactly_the_domain_modes() -> None:
    assert RUNTIME_VISIBLE_DEVICES_MODES == RUNTIME_IDS


def four_chips(tmp_path: Path, **changes: object) -> Settings:
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4\ncount: 8\n")
    return defaults(
        hardware=Hardware("fake", description), device_plugin_path=tmp_path / "dp", **changes
    )


@pytest.mark.parametrize(("mode", "expected"), [("unset", None), ("container", "0,1")])
def test_the_kubelet_plugins_profile_carries_the_mode(
    tmp_path: Path, mode: str, expected: str | None
) -> None:
    profile = container_for(four_chips(tmp_path, runtime_visible_devices=mode)).node.profile()
    env = dict(e.split("=", 1) for e in profile.visible_env(["3", "4"]))
    assert env.get("ASCEND_RT_VISIBLE_DEVICES") == expected
    assert env["ASCEND_VISIBLE_DEVICES"] == "3,4"


class Context:
    def abort(self, code: object, message: str) -> None:
        raise AssertionError(message)


@pytest.mark.parametrize(("mode", "expected"), [("unset", None), ("container", "0,1")])
def test_the_device_plugins_allocate_answer_carries_the_mode(
    tmp_path: Path, mode: str, expected: str | None
) -> None:
    settings = four_chips(tmp_path, runtime_visible_devices=mode)
    node = container_for(settings).node
    [plugin] = assemble(settings, node.hardware(), node.static_cdi()).plugins
    request = api.AllocateRequest(
        container_requests=[api.ContainerAllocateRequest(devices_ids=["npu-4", "npu-3"])]
    )
    [answer] = plugin.service.Allocate(request, Context()).container_responses
    assert answer.envs["ASCEND_VISIBLE_DEVICES"] == "3,4"
    assert answer.envs.get("ASCEND_RT_VISIBLE_DEVICES") == expected
