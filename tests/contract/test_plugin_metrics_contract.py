"""Every PluginMetrics adapter counts the same: the Prometheus series and the in-memory recorder.

Each test drives the port only, then reads what was counted through a small per-adapter
`Reading`: the recorder's lists, or the samples in the Prometheus adapter's registry (what a
scrape of /metrics shows), named by the series the adapter declares.
"""

from collections.abc import Callable
from typing import Protocol

import pytest

from npu_dra.adapters.metrics import series
from npu_dra.adapters.metrics.memory import MemoryMetrics
from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
from npu_dra.domain.metrics import REASONS, PluginMetrics

PREPARE = "NodePrepareResources"
UNPREPARE = "NodeUnprepareResources"
RESOURCE = "huawei.com/Ascend910"


class Reading(Protocol):
    """What was counted, in words both adapters can answer."""

    def in_flight(self, method: str) -> float: ...
    def calls(self, method: str) -> float: ...
    def call_seconds(self, method: str) -> float: ...
    def claim_errors(self, method: str, reason: str) -> float: ...
    def publishes(self, *, ok: bool) -> float: ...
    def probes(self, backend: str) -> float: ...
    def probe_failures(self, backend: str) -> float: ...
    def allocates(self, resource: str) -> float: ...
    def allocate_errors(self, resource: str, reason: str) -> float: ...
    def lists(self, resource: str) -> float: ...
    def commands(self, command: str) -> float: ...
    def command_failures(self, command: str) -> float: ...
    def retries(self, operation: str) -> float: ...


class MemoryReading:
    def __init__(self, metrics: MemoryMetrics) -> None:
        self.m = metrics

    def in_flight(self, method: str) -> float:
        return self.m.started.count(method) - self.calls(method)

    def calls(self, method: str) -> float:
        return sum(1 for c in self.m.calls if c.method == method)

    def call_seconds(self, method: str) -> float:
        return sum(c.seconds for c in self.m.calls if c.method == method)

    def claim_errors(self, method: str, reason: str) -> float:
        return sum(c.error_reasons.count(reason) for c in self.m.calls if c.method == method)

    def publishes(self, *, ok: bool) -> float:
        return self.m.publishes.count(ok)

    def probes(self, backend: str) -> float:
        return sum(1 for b, _ in self.m.probes if b == backend)

    def probe_failures(self, backend: str) -> float:
        return self.m.probes.count((backend, False))

    def allocates(self, resource: str) -> float:
        return sum(1 for r, _ in self.m.allocates if r == resource)

    def allocate_errors(self, resource: str, reason: str) -> float:
        return self.m.allocates.count((resource, reason))

    def lists(self, resource: str) -> float:
        return self.m.listed.count(resource)

    def commands(self, command: str) -> float:
        return sum(1 for c, _ in self.m.commands if c == command)

    def command_failures(self, command: str) -> float:
        return self.m.commands.count((command, False))

    def retries(self, operation: str) -> float:
        return self.m.retries.count(operation)


class PrometheusReading:
    """Samples as a scrape shows them; a series never touched reads 0."""

    def __init__(self, metrics: PrometheusMetrics) -> None:
        self.m = metrics

    def sample(self, name: str, **labels: str) -> float:
        return self.m.registry.get_sample_value(name, labels) or 0.0

    def in_flight(self, method: str) -> float:
        return self.sample(series.KUBELET_CALLS_IN_FLIGHT.name, method=method)

    def calls(self, method: str) -> float:
        return self.sample(f"{series.KUBELET_CALL_DURATION.name}_count", method=method)

    def call_seconds(self, method: str) -> float:
        return self.sample(f"{series.KUBELET_CALL_DURATION.name}_sum", method=method)

    def claim_errors(self, method: str, reason: str) -> float:
        name = series.KUBELET_CALL_CLAIM_ERRORS.name
        return self.sample(name, method=method, reason=reason)

    def publishes(self, *, ok: bool) -> float:
        return self.sample((series.SLICE_PUBLISHES if ok else series.SLICE_PUBLISH_FAILURES).name)

    def probes(self, backend: str) -> float:
        return self.sample(f"{series.PROBE_DURATION.name}_count", backend=backend)

    def probe_failures(self, backend: str) -> float:
        return self.sample(series.PROBE_FAILURES.name, backend=backend)

    def allocates(self, resource: str) -> float:
        return self.sample(f"{series.ALLOCATE_DURATION.name}_count", resource=resource)

    def allocate_errors(self, resource: str, reason: str) -> float:
        return self.sample(series.ALLOCATE_ERRORS.name, resource=resource, reason=reason)

    def lists(self, resource: str) -> float:
        return self.sample(series.LIST_AND_WATCH_UPDATES.name, resource=resource)

    def commands(self, command: str) -> float:
        return self.sample(f"{series.COMMAND_DURATION.name}_count", command=command)

    def command_failures(self, command: str) -> float:
        return self.sample(series.COMMAND_FAILURES.name, command=command)

    def retries(self, operation: str) -> float:
        return self.sample(series.API_RETRIES.name, operation=operation)


def memory() -> tuple[PluginMetrics, Reading]:
    metrics = MemoryMetrics()
    return metrics, MemoryReading(metrics)


def prometheus() -> tuple[PluginMetrics, Reading]:
    metrics = PrometheusMetrics()
    return metrics, PrometheusReading(metrics)


ADAPTERS: dict[str, Callable[[], tuple[PluginMetrics, Reading]]] = {
    "memory": memory,
    "prometheus": prometheus,
}


@pytest.fixture(params=ADAPTERS)
def adapter(request: pytest.FixtureRequest) -> tuple[PluginMetrics, Reading]:
    return ADAPTERS[request.param]()


def test_a_started_call_is_in_flight_until_it_is_done(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    metrics.call_started(method=PREPARE)
    metrics.call_started(method=PREPARE)
    metrics.call_started(method=UNPREPARE)
    assert (read.in_flight(PREPARE), read.in_flight(UNPREPARE)) == (2, 1)
    metrics.call_done(method=PREPARE, seconds=0.01, error_reasons=())
    assert (read.in_flight(PREPARE), read.in_flight(UNPREPARE)) == (1, 1)
    metrics.call_done(method=PREPARE, seconds=0.01, error_reasons=())
    metrics.call_done(method=UNPREPARE, seconds=0.01, error_reasons=())
    assert (read.in_flight(PREPARE), read.in_flight(UNPREPARE)) == (0, 0)


def test_a_done_call_is_counted_by_method_with_its_seconds(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    for seconds in (0.25, 0.5):
        metrics.call_started(method=PREPARE)
        metrics.call_done(method=PREPARE, seconds=seconds, error_reasons=())
    assert (read.calls(PREPARE), read.call_seconds(PREPARE)) == (2, 0.75)
    assert (read.calls(UNPREPARE), read.call_seconds(UNPREPARE)) == (0, 0)


def test_each_failed_claim_counts_once_under_its_reason(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    metrics.call_started(method=PREPARE)
    reasons = ("device_unhealthy", "device_unhealthy", "not_allocated")
    metrics.call_done(method=PREPARE, seconds=0.01, error_reasons=reasons)
    metrics.call_started(method=UNPREPARE)
    metrics.call_done(method=UNPREPARE, seconds=0.01, error_reasons=("internal",))
    assert read.claim_errors(PREPARE, "device_unhealthy") == 2
    assert read.claim_errors(PREPARE, "not_allocated") == 1
    assert read.claim_errors(PREPARE, "internal") == 0
    assert read.claim_errors(UNPREPARE, "internal") == 1
    assert read.calls(PREPARE) == 1  # one call, however many of its claims failed


def test_good_and_failed_publishes_are_counted_apart(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    for ok in (False, False, True):
        metrics.publish_done(ok=ok)
    assert (read.publishes(ok=True), read.publishes(ok=False)) == (1, 2)


def test_probes_are_counted_by_backend_and_only_failures_as_failed(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    metrics.probe_done(backend="npu_smi", seconds=0.2, ok=True)
    metrics.probe_done(backend="npu_smi", seconds=5.0, ok=False)
    metrics.probe_done(backend="fake", seconds=0.0, ok=True)
    assert (read.probes("npu_smi"), read.probe_failures("npu_smi")) == (2, 1)
    assert (read.probes("fake"), read.probe_failures("fake")) == (1, 0)
    assert read.probes("nvml") == 0


def test_allocates_are_counted_by_resource_and_refusals_by_reason(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    metrics.allocate_done(resource=RESOURCE, seconds=0.002, error_reason=None)
    metrics.allocate_done(resource=RESOURCE, seconds=0.001, error_reason="device_unhealthy")
    assert read.allocates(RESOURCE) == 2
    assert read.allocate_errors(RESOURCE, "device_unhealthy") == 1
    assert sum(read.allocate_errors(RESOURCE, r) for r in REASONS) == 1


def test_device_lists_are_counted_by_resource(adapter: tuple[PluginMetrics, Reading]) -> None:
    metrics, read = adapter
    metrics.devices_listed(resource=RESOURCE)
    metrics.devices_listed(resource=RESOURCE)
    metrics.devices_listed(resource="huawei.com/Ascend310P")
    assert (read.lists(RESOURCE), read.lists("huawei.com/Ascend310P")) == (2, 1)


def test_hardware_commands_are_counted_by_command_and_failures_apart(
    adapter: tuple[PluginMetrics, Reading],
) -> None:
    metrics, read = adapter
    metrics.hardware_command_done(command="npu-smi info", seconds=0.1, ok=True)
    metrics.hardware_command_done(command="npu-smi info -t topo", seconds=9.0, ok=False)
    metrics.hardware_command_done(command="npu-smi info -t topo", seconds=0.3, ok=True)
    assert (read.commands("npu-smi info"), read.command_failures("npu-smi info")) == (1, 0)
    topo = "npu-smi info -t topo"
    assert (read.commands(topo), read.command_failures(topo)) == (2, 1)


def test_api_retries_are_counted_by_operation(adapter: tuple[PluginMetrics, Reading]) -> None:
    metrics, read = adapter
    metrics.api_retry(operation="publish_slices")
    metrics.api_retry(operation="publish_slices")
    metrics.api_retry(operation="read")
    assert (read.retries("publish_slices"), read.retries("read")) == (2, 1)
    assert read.retries("list_slices") == 0


def test_each_method_counts_only_its_own_series(adapter: tuple[PluginMetrics, Reading]) -> None:
    metrics, read = adapter
    metrics.api_retry(operation="read")
    metrics.devices_listed(resource=RESOURCE)
    metrics.publish_done(ok=True)
    assert read.calls(PREPARE) == read.in_flight(PREPARE) == 0
    assert read.allocates(RESOURCE) == read.probes("fake") == read.commands("npu-smi info") == 0
    assert read.publishes(ok=False) == 0
