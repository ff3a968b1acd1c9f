"""The device plugin's /metrics (--metrics-port): Allocate durations and refusals by reason, and
the device lists ListAndWatch sent, scraped for real while a kubelet calls the plugin."""

import urllib.request
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from npu_dra.app.container import container_for
from npu_dra.app.options import Hardware, defaults
from tests.support.kubelet_dp import FakeKubelet

SOCKET = "npu-dra-ascend910.sock"
RESOURCE = "huawei.com/Ascend910"


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_allocates_and_device_lists_are_counted_on_the_metrics_port(
    kubelet: FakeKubelet, tmp_path: Path
) -> None:
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4\ncount: 4\n")
    settings = defaults(
        hardware=Hardware("fake", description),
        device_plugin_path=kubelet.dir,
        cdi_root=tmp_path / "cdi",
        api_lock_dir=tmp_path / "api-lock",
        metrics_port=0,
        health_interval=0.2,
    )
    container = container_for(settings)
    try:
        server = container.node.device_plugin_metrics()
        kubelet.wait_for_registrations(1)
        with kubelet.plugin(SOCKET) as plugin:
            plugin.watch().next_list()
            plugin.allocate(["npu-1"])
            with pytest.raises(grpc.RpcError):
                plugin.allocate(["npu-9"])
        samples = scrape(server.server_port)
    finally:
        container.shutdown_resources()
    resource = (("resource", RESOURCE),)
    assert samples[("npu_dra_device_plugin_allocate_duration_seconds_count", resource)] == 2
    refused = (("reason", "unknown_devices"), ("resource", RESOURCE))
    assert samples[("npu_dra_device_plugin_allocate_errors_total", refused)] == 1
    assert samples[("npu_dra_device_plugin_list_and_watch_updates_total", resource)] >= 1


def test_no_metrics_port_serves_nothing(kubelet: FakeKubelet, tmp_path: Path) -> None:
    description = tmp_path / "node.yaml"
    description.write_text("chip: 910B4\ncount: 1\n")
    settings = defaults(
        hardware=Hardware("fake", description),
        device_plugin_path=kubelet.dir,
        api_lock_dir=tmp_path / "api-lock",
    )
    container = container_for(settings)
    try:
        assert settings.metrics_port == -1
        assert container.node.device_plugin_metrics() is None
    finally:
        container.shutdown_resources()
