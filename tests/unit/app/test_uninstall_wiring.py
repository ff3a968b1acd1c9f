"""`--daemonset-name` and `--pod-namespace` (docs/uninstall.md): how they are read and
refused, and the watch they start: off without a name, the DaemonSet's fate with one."""

from __future__ import annotations

import argparse

import pytest

from npu_dra.adapters.cluster.memory_daemonsets import MemoryDaemonSets
from npu_dra.app.container import container_for
from npu_dra.app.options import OptionError, Settings, add_options, defaults, settings_from
from npu_dra.app.wiring.kubelet_plugin import watched_daemonset


def parse(argv: list[str], environ: dict[str, str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(prog="kubelet-plugin")
    add_options(parser, "kubelet-plugin", environ or {})
    args = parser.parse_args(argv)
    args.command = "kubelet-plugin"
    return settings_from(args)


def test_the_daemonset_and_its_namespace_come_from_the_downward_api_env() -> None:
    settings = parse([], {"DAEMONSET_NAME": "npu-dra", "POD_NAMESPACE": "ascend-dra"})
    assert (settings.daemonset_name, settings.pod_namespace) == ("npu-dra", "ascend-dra")


def test_without_a_daemonset_name_the_plugin_stops_at_once_as_before() -> None:
    assert parse([]).daemonset_name == ""


def test_a_daemonset_name_without_its_namespace_is_refused_naming_both() -> None:
    with pytest.raises(OptionError, match="--daemonset-name needs --pod-namespace"):
        parse(["--daemonset-name=npu-dra"])


@pytest.mark.parametrize("flag", ["--daemonset-name=Not_A_Name", "--pod-namespace=a.b"])
def test_invalid_names_are_refused_naming_the_flag(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse([flag, "--pod-namespace=ns"])
    assert flag.split("=")[0] in capsys.readouterr().err


def test_no_watch_without_a_daemonset_name_or_an_api_server() -> None:
    daemonsets = MemoryDaemonSets()
    assert next(watched_daemonset(defaults(), daemonsets)) is None
    named = defaults(daemonset_name="npu-dra", pod_namespace="ns")
    assert next(watched_daemonset(named, None)) is None
    assert container_for(named.derive(cluster="memory")).node.uninstall_watch() is None


def test_the_watch_follows_the_named_daemonset_until_shut_down() -> None:
    daemonsets = MemoryDaemonSets()
    daemonsets.apply("ns", "npu-dra")
    daemonsets.apply("ns", "other")
    running = watched_daemonset(defaults(daemonset_name="npu-dra", pod_namespace="ns"), daemonsets)
    fate = next(running)
    assert fate is not None
    daemonsets.delete("ns", "other")
    assert not fate.uninstalling
    daemonsets.delete("ns", "npu-dra")
    assert fate.uninstalling
    running.close()  # the resource's shutdown: the watch stops
    daemonsets.apply("ns", "npu-dra")
    assert fate.uninstalling
