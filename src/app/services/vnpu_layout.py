"""Whether this node publishes vNPU devices: `--vnpu=templates`, a backend that can split
chips, and an API server that keeps the counter fields, in the layout it accepts.

The server is asked at the first probe that needs it, not at start: the plugin starts, repairs
and answers checkpointed claims with no API server. Until the server has answered, the node is
whole chips (a vNPU claim cannot be allocated before the pool has vNPU devices anyway); an
answer is final and logged once.
"""

import logging
import threading
from typing import Protocol, runtime_checkable

from npu_dra.adapters.hardware.vnpu_probe import VnpuProbe
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.ports import HardwareProbe, VnpuTable

log = logging.getLogger(__name__)
MODES = ("none", "templates")
_UNDECIDED = "undecided"


@runtime_checkable
class ServesPartitionableDevices(Protocol):
    def partitionable_layout(self, *, node: NodeName, driver: DriverName) -> str | None:
        """ "same-slice" (1.34), "apart" (1.35+), or None: the server drops counters."""
        ...


class VnpuLayoutProbe:
    """The hardware's inventory, with the chips' vNPU layouts once the server keeps counters."""

    def __init__(
        self,
        probe: HardwareProbe,
        table: VnpuTable,
        *,
        cluster: object,
        node: NodeName,
        driver: DriverName,
    ) -> None:
        self._probe = probe
        self._table = table
        self._cluster = cluster
        self._node = node
        self._driver = driver
        self._layout: str | None = (
            _UNDECIDED if isinstance(cluster, ServesPartitionableDevices) else "same-slice"
        )
        self._lock = threading.Lock()
        self._said_waiting = False
        self._vnpu_probe: VnpuProbe | None = None  # one, once decided: it logs once per change

    def probe(self) -> NodeInventory:
        layout = self._decided()
        if layout in (None, _UNDECIDED):
            return self._probe.probe()
        with self._lock:
            if self._vnpu_probe is None:
                apart = layout == "apart"
                self._vnpu_probe = VnpuProbe(self._probe, self._table, counter_slices=apart)
            vnpu_probe = self._vnpu_probe
        return vnpu_probe.probe()

    def _decided(self) -> str | None:
        with self._lock:
            if self._layout != _UNDECIDED or not isinstance(
                self._cluster, ServesPartitionableDevices
            ):
                return self._layout
            try:
                self._layout = self._cluster.partitionable_layout(
                    node=self._node, driver=self._driver
                )
            except DomainError as error:
                if not self._said_waiting:
                    log.warning(
                        "--vnpu=templates: cannot ask the API server whether it keeps "
                        "counters yet (%s); whole chips until it answers",
                        error,
                    )
                    self._said_waiting = True
                return _UNDECIDED
            if self._layout is None:
                log.warning(
                    "--vnpu=templates: the API server drops sharedCounters/"
                    "consumesCounters (DRAPartitionableDevices is off); publishing whole chips only"
                )
            else:
                log.info(
                    "--vnpu=templates: publishing vNPU devices (counter sets %s)",
                    self._layout,
                )
            return self._layout


def vnpu_layout_probe(
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
        log.warning("--vnpu=templates: this hardware cannot split chips; whole chips only")
        return probe
    return VnpuLayoutProbe(probe, table, cluster=cluster, node=node, driver=driver)
