"""/metrics scraped for real (prometheus-client's own parser) while the kubelet storms the plugin
with prepares and unprepares: the call histograms count every call, errors are counted under a
reason word, and device health, registration and prepared claims are read as they are now."""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from plugin_node import Node, plugin_settings, start_node
from prometheus_client.parser import text_string_to_metric_families

ROUNDS = 6
HEALTHY = [f"npu-{n}" for n in range(7)]  # npu-7 is Critical on this node


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture
def metered(scratch: Path) -> Iterator[tuple[Node, int]]:
    started = start_node(plugin_settings(scratch, metrics_port=0))
    server = started.container.node.metrics_server()
    yield started, server.server_port
    started.plugin.stop()


def test_metrics_scraped_during_a_prepare_storm_count_every_call(
    metered: tuple[Node, int],
) -> None:
    node, port = metered
    before_registration = scrape(port)[("npu_dra_kubelet_registered", ())]
    refs = [node.claim(f"storm-{device}", [device]) for device in HEALTHY]
    bad = node.claim("storm-bad", ["npu-7"])
    first_scrape, storm_over = threading.Event(), threading.Event()
    during: list[dict[tuple[str, tuple[tuple[str, str], ...]], float]] = []

    def scraper() -> None:
        while not storm_over.is_set():
            during.append(scrape(port))
            first_scrape.set()

    with node.kubelet.register() as dra, ThreadPoolExecutor(len(refs) + 1) as pool:
        scraping = pool.submit(scraper)

        def storm(ref: object) -> None:
            for round_ in range(ROUNDS):
                dra.prepare([ref])
                if round_ == 1:
                    first_scrape.wait(30)  # so at least one scrape lands mid-storm
                dra.unprepare([ref])

        list(pool.map(storm, refs))
        storm_over.set()
        scraping.result()
        dra.prepare([bad])
        after = scrape(port)

    calls = len(refs) * ROUNDS
    prepare = (("method", "NodePrepareResources"),)
    unprepare = (("method", "NodeUnprepareResources"),)
    assert during, "no scrape landed during the storm"
    assert after[("npu_dra_kubelet_call_duration_seconds_count", prepare)] == calls + 1
    assert after[("npu_dra_kubelet_call_duration_seconds_count", unprepare)] == calls
    # Buckets resolve 1-100 ms: a prepare on fake hardware lands below 100 ms, so that bucket
    # counts calls while +Inf counts them all.
    fast = after[("npu_dra_kubelet_call_duration_seconds_bucket", (("le", "0.1"), *prepare))]
    assert 0 < fast <= calls + 1
    assert after[("npu_dra_kubelet_calls_in_flight", prepare)] == 0
    errors = (("method", "NodePrepareResources"), ("reason", "device_unhealthy"))
    assert after[("npu_dra_kubelet_call_claim_errors_total", errors)] == 1
    assert after[("npu_dra_claims_prepared", ())] == 0
    assert before_registration == -1
    assert after[("npu_dra_kubelet_registered", ())] == 1
    critical = (("chip", "910B4"), ("device", "npu-7"), ("state", "Critical"))
    assert after[("npu_dra_device_health", critical)] == 1
    healthy = (("chip", "910B4"), ("device", "npu-0"), ("state", "Healthy"))
    assert after[("npu_dra_device_health", healthy)] == 1
    assert after[("npu_dra_resourceslice_publishes_total", ())] >= 1
    counted = [s.get(("npu_dra_kubelet_call_duration_seconds_count", prepare), 0) for s in during]
    assert counted == sorted(counted)  # scrapes mid-storm saw the count only grow


def test_metrics_are_off_unless_a_port_is_given(node: Node) -> None:
    assert node.container.node.metrics_server() is None


def test_a_metrics_port_in_use_is_bound_once_the_other_instance_lets_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two plugin pods on one host network during a seamless upgrade: the new one serves, and
    takes the metrics port when the old one has gone, instead of failing to start."""
    import socket

    from npu_dra.adapters.checkpoint.memory import MemoryCheckpointStore
    from npu_dra.adapters.grpc.registration_server import RegistrationState
    from npu_dra.adapters.hardware.fake import FakeHardware
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
    from npu_dra.app.kubelet_plugin import metrics_server
    from npu_dra.app.services.inventory import InventoryCache
    from npu_dra.domain.ids import NodeName

    monkeypatch.setattr(metrics_server, "RETRY_BIND_S", 0.05)
    old = socket.socket()
    old.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    old.bind(("127.0.0.1", 0))
    old.listen(1)
    port = old.getsockname()[1]
    served = metrics_server.serve_metrics(
        metrics=PrometheusMetrics(),
        port=port,
        host="127.0.0.1",
        inventory=InventoryCache(FakeHardware({"chip": "910B4", "count": 1}, node=NodeName("n"))),
        registration=RegistrationState(),
        checkpoints=MemoryCheckpointStore(),
    )
    assert next(served) is None  # started, not yet bound
    old.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as page:
                if b"npu_dra_kubelet_registered" in page.read():
                    break
        except OSError:
            time.sleep(0.05)
    else:
        raise AssertionError("the metrics port was never bound after the other instance left")
    served.close()
