"""The classic device plugin's graph: one resource per chip family, so it is assembled from the
first probe, served and registered as one resource, with its /metrics beside it."""

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from npu_dra.app.options import Settings
from npu_dra.domain.ports import HardwareProbe, StaticCdiSpecs

if TYPE_CHECKING:
    from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
    from npu_dra.app.device_plugin.registration_supervisor import DevicePluginRuntime
    from npu_dra.domain.metrics import PluginMetrics


def running_device_plugin(
    *,
    api_lock: object,  # held first: this node runs no DRA plugin (adapters/api_lock)
    settings: Settings,
    probe: HardwareProbe,
    static_cdi: StaticCdiSpecs,
    metrics: "PluginMetrics | None",
) -> Iterator["DevicePluginRuntime"]:
    """Every resource served and registered, counting Allocates and device lists."""
    from npu_dra.app.device_plugin.assembly import assemble

    runtime = assemble(settings, probe, static_cdi, metrics)
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


def running_device_plugin_metrics(
    *,
    settings: Settings,
    metrics: "Callable[[], PrometheusMetrics]",
    serving: "DevicePluginRuntime",
) -> Iterator[object]:
    """The device plugin's /metrics on --metrics-port (off with -1), once it serves."""
    if settings.metrics_port < 0:
        yield None
        return
    server = metrics().serve(settings.metrics_port, settings.healthcheck_host)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
