"""PluginMetrics as Prometheus series, served on --metrics-port by prometheus-client.

Names follow Prometheus' conventions (`npu_dra_` prefix, base units, `_total` counters,
`_seconds` histograms). The call histograms' buckets resolve 1-100 ms, where a prepare lives.
State that already exists elsewhere (the devices' health, the kubelet's registration verdict,
the checkpoint's claims) is read at scrape time by collectors instead of being copied into
gauges, so a scrape always shows what the plugin holds now. Each instance has its own registry,
so two plugins in one process (tests) never share series. The series are declared once, as
module-level data (name, help, labels, buckets), and built into each instance's registry.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from wsgiref.simple_server import WSGIServer

import attrs
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from npu_dra.domain.device import Health, NodeInventory

CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
PROBE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


@attrs.frozen
class _Series:
    """One metric family: its name, help text and label names."""

    name: str
    documentation: str
    labels: tuple[str, ...]


@attrs.frozen
class CounterSeries(_Series):
    def build(self, registry: CollectorRegistry) -> Counter:
        return Counter(self.name, self.documentation, self.labels, registry=registry)


@attrs.frozen
class GaugeSeries(_Series):
    def build(self, registry: CollectorRegistry) -> Gauge:
        return Gauge(self.name, self.documentation, self.labels, registry=registry)


@attrs.frozen
class HistogramSeries(_Series):
    buckets: tuple[float, ...] = attrs.field(kw_only=True)

    def build(self, registry: CollectorRegistry) -> Histogram:
        return Histogram(
            self.name, self.documentation, self.labels, buckets=self.buckets, registry=registry
        )


KUBELET_CALL_DURATION = HistogramSeries(
    "npu_dra_kubelet_call_duration_seconds",
    "Duration of the kubelet's DRA calls, by method.",
    ("method",),
    buckets=CALL_BUCKETS,
)
KUBELET_CALLS_IN_FLIGHT = GaugeSeries(
    "npu_dra_kubelet_calls_in_flight",
    "Kubelet DRA calls being served now, by method.",
    ("method",),
)
KUBELET_CALL_CLAIM_ERRORS = CounterSeries(
    "npu_dra_kubelet_call_claim_errors_total",
    "Claims a kubelet DRA call could not serve, by method and reason.",
    ("method", "reason"),
)
SLICE_PUBLISHES = CounterSeries(
    "npu_dra_resourceslice_publishes_total",
    "Publishes of the node's ResourceSlices that succeeded.",
    (),
)
SLICE_PUBLISH_FAILURES = CounterSeries(
    "npu_dra_resourceslice_publish_failures_total",
    "Publishes of the node's ResourceSlices that failed (retried).",
    (),
)
PROBE_DURATION = HistogramSeries(
    "npu_dra_hardware_probe_duration_seconds",
    "Duration of a hardware probe (npu-smi commands, NVML), by backend.",
    ("backend",),
    buckets=PROBE_BUCKETS,
)
PROBE_FAILURES = CounterSeries(
    "npu_dra_hardware_probe_failures_total",
    "Hardware probes that failed (the last good inventory stays), by backend.",
    ("backend",),
)
ALLOCATE_DURATION = HistogramSeries(
    "npu_dra_device_plugin_allocate_duration_seconds",
    "Duration of the kubelet's device plugin Allocate calls, by resource.",
    ("resource",),
    buckets=CALL_BUCKETS,
)
ALLOCATE_ERRORS = CounterSeries(
    "npu_dra_device_plugin_allocate_errors_total",
    "Allocate calls the device plugin refused, by resource and reason.",
    ("resource", "reason"),
)
LIST_AND_WATCH_UPDATES = CounterSeries(
    "npu_dra_device_plugin_list_and_watch_updates_total",
    "Device lists sent on ListAndWatch streams (the first and every change), by resource.",
    ("resource",),
)
COMMAND_DURATION = HistogramSeries(
    "npu_dra_hardware_command_duration_seconds",
    "Duration of one hardware command (npu-smi info, info -m, ...), by command.",
    ("command",),
    buckets=PROBE_BUCKETS,
)
COMMAND_FAILURES = CounterSeries(
    "npu_dra_hardware_command_failures_total",
    "Hardware commands that failed (timed out, could not run, exited non-zero).",
    ("command",),
)
API_RETRIES = CounterSeries(
    "npu_dra_api_retries_total",
    "API server calls retried after a transient failure, by operation.",
    ("operation",),
)

# The state series, read at scrape time by the collectors below (app/kubelet_plugin/
# metrics_server.py registers them); declared here with the others so that SERIES lists all.
DEVICE_HEALTH = GaugeSeries(
    "npu_dra_device_health",
    "Health of each device as last probed (1 for its state, 0 for the others).",
    ("device", "chip", "state"),
)
KUBELET_REGISTERED = GaugeSeries(
    "npu_dra_kubelet_registered",
    "The kubelet's verdict on the plugin's registration: 1 registered, 0 rejected, "
    "-1 not yet called.",
    (),
)
CLAIMS_PREPARED = GaugeSeries(
    "npu_dra_claims_prepared", "Claims prepared on this node (in the checkpoint).", ()
)
CLAIMS_DEVICE_GONE = GaugeSeries(
    "npu_dra_claims_device_gone",
    "Prepared claims a device of which is gone from this node or is now another device "
    "(after a reboot or a swap): their CDI specs are removed, their pods run without it.",
    (),
)
CLAIM_DEVICES = GaugeSeries(
    "npu_dra_claim_device_info",
    "1 for each device prepared for a claim on this node (which claim holds which device).",
    ("claim_namespace", "claim_name", "device"),
)
CLAIM_PREFETCH = CounterSeries(
    "npu_dra_claim_prefetch_total",
    "New claims a prepare found read ahead when their pod was bound (hit), or read "
    "from the API server itself (miss).",
    ("result",),
)
CLAIM_PREFETCH_READY = GaugeSeries(
    "npu_dra_claim_prefetch_ready", "Claims read ahead whose prepare has not come yet.", ()
)
# Every series the plugins serve, in the order docs/reference/metrics.md lists them.
SERIES: tuple[_Series, ...] = (
    *(KUBELET_CALL_DURATION, KUBELET_CALLS_IN_FLIGHT, KUBELET_CALL_CLAIM_ERRORS),
    *(SLICE_PUBLISHES, SLICE_PUBLISH_FAILURES, PROBE_DURATION, PROBE_FAILURES),
    *(COMMAND_DURATION, COMMAND_FAILURES, API_RETRIES),
    *(DEVICE_HEALTH, KUBELET_REGISTERED, CLAIMS_PREPARED, CLAIMS_DEVICE_GONE, CLAIM_DEVICES),
    *(CLAIM_PREFETCH, CLAIM_PREFETCH_READY),
    *(ALLOCATE_DURATION, ALLOCATE_ERRORS, LIST_AND_WATCH_UPDATES),
)


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
