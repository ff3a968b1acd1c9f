"""The series the plugins serve, declared once as data: name, help text, labels, buckets.

Names follow Prometheus' conventions (`npu_dra_` prefix, base units, `_total` counters,
`_seconds` histograms). The call histograms' buckets resolve 1-100 ms, where a prepare lives.
Each declaration builds its prometheus-client metric into a given registry
(adapters/metrics/prometheus.py), and SERIES lists them all for docs/reference/metrics.md
(tools/reference.py) and the monitoring tests.
"""

import attrs
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

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

# The state series, read at scrape time by the collectors in prometheus.py (app/kubelet_plugin/
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
