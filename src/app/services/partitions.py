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
    def serves_partitionable_devices(self, *, node: NodeName, driver: DriverName) -> bool: ...


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
    if isinstance(cluster, ServesPartitions) and not cluster.serves_partitionable_devices(
        node=node, driver=driver
    ):
        log.warning(
            "--partitions=templates: the API server drops sharedCounters/consumesCounters "
            "(DRAPartitionableDevices is off); publishing whole chips only"
        )
        return probe
    log.info("--partitions=templates: publishing vNPU partitions next to whole chips")
    return SlicedProbe(probe, table)
