"""Which socket names a plugin instance uses: per pod where the kubelet keeps two endpoints per
driver (1.33 and newer) and the pod's UID is given, the one-instance names otherwise."""

import logging
import time

import pytest

from npu_dra.app.kubelet_plugin import instance as module
from npu_dra.app.kubelet_plugin.instance import PluginInstance, plugin_instance, supports_seamless

UID = "0b7f1a52-3d4e-4f6a-8b9c-0d1e2f3a4b5c"


def test_names_per_pod_and_alone() -> None:
    assert PluginInstance(UID).registration_socket_name("npu.huawei.com") == (
        f"npu.huawei.com-{UID}-reg.sock"
    )
    assert PluginInstance(UID).dra_socket_name() == f"dra-{UID}.sock"
    assert PluginInstance().registration_socket_name("npu.huawei.com") == "npu.huawei.com-reg.sock"
    assert PluginInstance().dra_socket_name() == "dra.sock"
    assert PluginInstance(UID).seamless
    assert not PluginInstance().seamless


@pytest.mark.parametrize(
    ("version", "expected"),
    [("v1.34.3", True), ("v1.33.0", True), ("v1.36.3", True), ("v1.32.9", False),
     ("v2.0.0", True), ("1.33", True), ("", None), ("garbage", None)],
)  # fmt: skip
def test_kubelet_versions(version: str, expected: bool | None) -> None:
    assert supports_seamless(version) is expected


@pytest.mark.parametrize(
    ("answer", "seamless", "said"),
    [
        (lambda: "v1.34.3", True, "seamless upgrades on"),
        (lambda: "v1.32.1", False, "keeps one endpoint per driver"),
        (lambda: None, False, "no Node of this --node-name"),
        (lambda: "", False, "cannot be read"),
        (lambda: (_ for _ in ()).throw(ConnectionError("refused")), False, "refused"),
    ],
)
def test_auto_asks_the_kubelet_version(
    answer: object, seamless: bool, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        chosen = plugin_instance("auto", UID, answer)  # type: ignore[arg-type]
    assert chosen.seamless is seamless
    assert said in caplog.text


def test_auto_does_not_wait_for_an_api_server_that_does_not_answer(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(module, "LOOKUP_S", 0.2)
    with caplog.at_level(logging.INFO):
        chosen = plugin_instance("auto", UID, lambda: time.sleep(30) or "v1.34.3")  # type: ignore[func-returns-value]
    assert not chosen.seamless
    assert "could not be read" in caplog.text


def test_off_no_uid_and_on() -> None:
    assert not plugin_instance("off", UID, lambda: "v1.34.3").seamless
    assert not plugin_instance("auto", "", lambda: "v1.34.3").seamless
    assert not plugin_instance("on", "", None).seamless
    assert plugin_instance("on", UID, None) == PluginInstance(UID)
    assert not plugin_instance("auto", UID, None).seamless  # no API server to ask
