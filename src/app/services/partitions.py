"""Whether this node publishes partitions: `--partitions=templates`, a backend that can split
chips, and an API server that keeps the counter fields. Decided once at start and logged once;
anything missing means whole chips only, never a pool the scheduler would misread."""

import logging
from typing import Protocol, runtime_checkable

from npu_dra.adapters.hardware.sliced import SlicedProbe
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.partitions.ports import VnpuTable
from npu_dra.domain.ports import HardwareProbe

log = logging.getLogger(__name__)
MODES = ("none", "templates")


@runtime_checkable
class ServesPartitions(Protocol):
    def partitionable_layout(self, *, node: NodeName, driver: DriverName) -> str | None:
        """ "same-slice" (1.34), "apart" (1.35+), or None: the server drops counters."""
        ...


def partitioned_probe(
    probe: HardwareProbe,
    table: VnpuTable | None,
    *,
    mode: str | None,
    cluster: object,
    node: NodeName,
    driver: DriverName,
) -> HardwareProbe:
    if (mode or "none") == "none":
        return probe
    if table is None:
        log.warning("--partitions=templates: this hardware cannot split chips; whole chips only")
        return probe
    layout = "same-slice"
    if isinstance(cluster, ServesPartitions):
        layout = cluster.partitionable_layout(node=node, driver=driver) or ""
    if not layout:
        log.warning(
            "--partitions=templates: the API server drops sharedCounters/consumesCounters "
            "(DRAPartitionableDevices is off); publishing whole chips only"
        )
        return probe
    log.info("--partitions=templates: publishing vNPU partitions (counter sets %s)", layout)
    return SlicedProbe(probe, table, counter_slices=layout == "apart")
