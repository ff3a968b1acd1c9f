"""The chart's `sharing` values: chips reach the kubelet plugin as --shared-chips (and shares as
--chip-shares) only when set, the default render passes neither, and the schema refuses what
the flags would refuse."""

from __future__ import annotations

import pytest

from tests.deploy.helm_cli import Helm, HelmError
from tests.deploy.objects import container, only
from tests.deploy.test_helm_chart import kubelet_plugin_settings


def sharing_flags(rendered: list[dict[str, object]]) -> list[str]:
    args = container(only(rendered, "DaemonSet"))["args"]
    return [a for a in args if a.startswith(("--shared-chips", "--chip-shares"))]


def test_by_default_no_chip_is_shared_and_no_flag_is_passed(helm: Helm) -> None:
    rendered = helm.template()
    assert sharing_flags(rendered) == []
    settings = kubelet_plugin_settings(rendered)
    assert (settings.shared_chips, settings.chip_shares) == (frozenset(), 4)


def test_named_chips_and_their_shares_reach_the_plugins_flags(helm: Helm) -> None:
    rendered = helm.template(values={"sharing": {"chips": "npu-0,npu-3", "shares": 8}})
    assert sharing_flags(rendered) == ["--shared-chips=npu-0,npu-3", "--chip-shares=8"]
    settings = kubelet_plugin_settings(rendered)
    assert settings.shared_chips == frozenset({"npu-0", "npu-3"})
    assert settings.chip_shares == 8


def test_all_chips_with_the_default_shares_pass_only_the_chips(helm: Helm) -> None:
    rendered = helm.template(values={"sharing": {"chips": "all", "shares": 4}})
    assert sharing_flags(rendered) == ["--shared-chips=all"]
    assert kubelet_plugin_settings(rendered).shared_chips is None


def test_shares_without_chips_pass_nothing(helm: Helm) -> None:
    assert sharing_flags(helm.template(set_values=["sharing.shares=8"])) == []


@pytest.mark.parametrize(
    "value",
    ["sharing.shares=1", "sharing.shares=101", "sharing.chips=NPU-0", "sharing.chips=npu_0"],
)
def test_the_schema_refuses_what_the_flags_refuse(helm: Helm, value: str) -> None:
    with pytest.raises(HelmError, match=r"sharing"):
        helm.template(set_values=[value])
