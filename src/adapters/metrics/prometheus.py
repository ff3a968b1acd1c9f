"""PluginMetrics as Prometheus series, served on --metrics-port by prometheus-client.

The series are declared once, as module-level data (name, help, labels, buckets), in
adapters/metrics/series.py and built into each instance's registry here. State that already
exists elsewhere (the devices' health, the kubelet's registration verdict, the checkpoint's
claims) is read at scrape time by collectors instead of being copied into gauges, so a scrape
always shows what the plugin holds now. Each instance has its own registry, so two plugins in
one process (tests) never share series.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from npu_dra.adapters.metrics.series import (
    ALLOCATE_DURATION,
    ALLOCATE_ERRORS,
    API_RETRIES,
    COMMAND_DURATION,
    COMMAND_FAILURES,
    DEVICE_HEALTH,
    KUBELET_CALL_CLAIM_ERRORS,
    KUBELET_CALL_DURATION,
    KUBELET_CALLS_IN_FLIGHT,
    LIST_AND_WATCH_UPDATES,
    PROBE_DURATION,
    PROBE_FAILURES,
    SLICE_PUBLISH_FAILURES,
    SLICE_PUBLISHES,
    CounterSeries,
    GaugeSeries,
)
from npu_dra.domain.device import Health, NodeInventory


class PrometheusMetrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self._duration = KUBELET_CALL_DURATION.build(r)
        self._in_flight = KUBELET_CALLS_IN_FLIGHT.build(r)
        self._claim_errors = KUBELET_CALL_CLAIM_ERRORS.build(r)
        self._publishes = SLICE_PUBLISHES.build(r)
        self._publish_failures = SLICE_PUBLISH_FAILURES.build(r)
        self._probe = PROBE_DURATION.build(r)
        self._probe_failures = PROBE_FAILURES.build(r)
        self._allocate = ALLOCATE_DURATION.build(r)
        self._allocate_errors = ALLOCATE_ERRORS.build(r)
        self._listed = LIST_AND_WATCH_UPDATES.build(r)
        self._command = COMMAND_DURATION.build(r)
        self._command_failures = COMMAND_FAILURES.build(r)
        self._api_retries = API_RETRIES.build(r)

    # --- the PluginMetrics port ----------------------------------------------------------------
    def call_started(self, *, method: str) -> None:
        self._in_flight.labels(method).inc()

    def call_done(self, *, method: str, seconds: float, error_reasons: Sequence[str]) -> None:
        self._in_flight.labels(method).dec()
        self._duration.labels(method).observe(seconds)
        for reason in error_reasons:
            self._claim_errors.labels(method, reason).inc()

    def publish_done(self, *, ok: bool) -> None:
        (self._publishes if ok else self._publish_failures).inc()

    def probe_done(self, *, backend: str, seconds: float, ok: bool) -> None:
        self._probe.labels(backend).observe(seconds)
        if not ok:
            self._probe_failures.labels(backend).inc()

    def allocate_done(self, *, resource: str, seconds: float, error_reason: str | None) -> None:
        self._allocate.labels(resource).observe(seconds)
        if error_reason is not None:
            self._allocate_errors.labels(resource, error_reason).inc()

    def devices_listed(self, *, resource: str) -> None:
        self._listed.labels(resource).inc()

    def api_retry(self, *, operation: str) -> None:
        self._api_retries.labels(operation).inc()

    def hardware_command_done(self, *, command: str, seconds: float, ok: bool) -> None:
        self._command.labels(command).observe(seconds)
        if not ok:
            self._command_failures.labels(command).inc()

    # --- state read at scrape time -------------------------------------------------------------
    def watch(self, collector: Collector) -> None:
        self.registry.register(collector)

    def serve(self, port: int, host: str) -> WSGIServer:
        """/metrics on host:port (0: any free port, see `server.server_port`) until shutdown."""
        server, _ = start_http_server(port, addr=host, registry=self.registry)
        return server


class DeviceHealthCollector(Collector):
    """`npu_dra_device_health{device,chip,state}`: 1 for each device's current health state."""

    def __init__(self, inventory: Callable[[], NodeInventory]) -> None:
        self._inventory = inventory

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            DEVICE_HEALTH.name, DEVICE_HEALTH.documentation, labels=list(DEVICE_HEALTH.labels)
        )
        for device in self._inventory().devices:
            for state in Health:
                value = 1.0 if device.health is state else 0.0
                family.add_metric([device.name, device.chip_name, state.value], value)
        yield family


class LabelledCollector(Collector):
    """One gauge with labels: a value per label tuple `read` gives at scrape time."""

    def __init__(
        self, series: GaugeSeries, read: Callable[[], Iterable[tuple[Sequence[str], float]]]
    ) -> None:
        self._series, self._read = series, read

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            self._series.name, self._series.documentation, labels=list(self._series.labels)
        )
        for labels, value in self._read():
            family.add_metric(list(labels), value)
        yield family


class ValueCollector(Collector):
    """One gauge, without labels, whose value is read from `read` at scrape time."""

    def __init__(self, series: GaugeSeries, read: Callable[[], float]) -> None:
        self._series, self._read = series, read

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily(self._series.name, self._series.documentation, value=self._read())


class CountsCollector(Collector):
    """One counter with one label, a value per label value, read from `read` at scrape time."""

    def __init__(self, series: CounterSeries, read: Callable[[], Mapping[str, float]]) -> None:
        self._series, self._read = series, read

    def collect(self) -> Iterator[CounterMetricFamily]:
        name = self._series.name.removesuffix("_total")  # the family adds it back
        family = CounterMetricFamily(name, self._series.documentation, labels=self._series.labels)
        for value, count in self._read().items():
            family.add_metric([value], count)
        yield family
