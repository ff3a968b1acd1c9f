"""The chart's dashboard and alert rules against a running plugin: every driver series they use
is served on its /metrics (the prefetch and device plugin series aside, which this plugin does
not run), and the claim -> device attribution names the claim a device was prepared for."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_node import Node, plugin_settings, start_node
from prometheus_client.parser import text_string_to_metric_families

from tests.deploy.test_monitoring import used_names

SUFFIXES = ("_bucket", "_sum", "_count", "_total")


def families(port: int) -> tuple[set[str], list[tuple[str, dict[str, str]]]]:
    """(the family names /metrics declares, every sample with its labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    parsed = list(text_string_to_metric_families(text))
    samples = [(s.name, dict(s.labels)) for family in parsed for s in family.samples]
    return {family.name for family in parsed}, samples


def family_of(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


@pytest.fixture
def metered(scratch: Path) -> Iterator[tuple[Node, int]]:
    started = start_node(plugin_settings(scratch, metrics_port=0))
    server = started.container.node.metrics_server()
    yield started, server.server_port
    started.plugin.stop()


def test_every_driver_series_the_chart_uses_is_served_and_names_the_claims_devices(
    metered: tuple[Node, int],
) -> None:
    node, port = metered
    ref = node.claim("attributed", ["npu-2"])
    with node.kubelet.register() as dra:
        dra.prepare([ref])
        declared, samples = families(port)
    used = {family_of(name) for name in used_names() if name.startswith("npu_dra_")}
    assert used - declared == set()
    held = [labels for name, labels in samples if name == "npu_dra_claim_device_info"]
    assert {"claim_name": "attributed", "device": "npu-2"}.items() <= held[0].items()
    assert len(held) == 1
