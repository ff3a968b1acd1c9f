"""Keeps the published pool true: publishes it first thing, re-probes hardware every interval
(health changes) and the shared chips' held forms (released claims give a chip its flags' form
back: app/services/chip_sharing/forms.py), and republishes at once when the API tells us our slices
were changed or deleted by someone else.

Publishing never blocks serving: the plugin serves both sockets from its checkpoint while this
worker publishes in the background. A publish that fails (the API server is down) is tried
again after `retry_s`, doubling up to `publish_retry_max_s` (8 s: the pool is back within a few
seconds of the API server coming back, and a cluster's plugins do not hammer it while it
recovers), and a restart during an outage never crash-loops. Where the hardware gives no
inventory to publish (npu-smi or the driver library missing, failing or hung: each probe costs
up to --probe-timeout), the tries double up to `hardware_retry_max_s`. Every wait is jittered. A
failure is logged when it first happens and when it changes, not on every try.

Until the pool is published, while the hardware gives no inventory, and while the API server
knows no Node of the plugin's --node-name (looked up after each publish until found; a
mistyped name would otherwise publish slices no scheduler matches to the node), the plugin is not
ready:
`readiness_problem` says why (the health port's "readiness" service answers NOT_SERVING, so the
pod shows 0/1 READY), and a Node Event says when the hardware went away and came back.

One worker thread does every publish, so probes and syncs never overlap; wake-ups that arrive
while it works are merged into one more sync. Hardware that announces faults (a FaultNotifier:
DCMI's fault events) asks for a re-probe at once (`request_probe`) instead of waiting for the
next interval; the interval's re-probe stays, as the fallback.
"""

import logging
import threading
import time
from collections.abc import Iterator

from npu_dra.app.services.event_sink import EventSink
from npu_dra.app.services.inventory import InventoryCache
from npu_dra.app.services.publisher import PoolPublisher
from npu_dra.domain.backoff import Backoff
from npu_dra.domain.errors import DomainError
from npu_dra.domain.events import hardware_event, health_events
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.metrics import PluginMetrics
from npu_dra.domain.ports import FaultNotifier, HardwareProbe, NodeDirectory, SliceWatcher

log = logging.getLogger(__name__)

RETRY_S = 0.5
PUBLISH_RETRY_MAX_S = 8.0
HARDWARE_RETRY_MAX_S = 60.0
NOT_PUBLISHED = "the pool is not published yet"
STOP_WAIT_S = 2.0  # a publish stuck on a dead API server is not waited for (daemon thread)


class PoolMaintainer:
    def __init__(
        self,
        *,
        inventory: InventoryCache,
        publisher: PoolPublisher,
        interval_s: float,
        retry_s: float = RETRY_S,
        hardware_retry_max_s: float = HARDWARE_RETRY_MAX_S,
        publish_retry_max_s: float = PUBLISH_RETRY_MAX_S,
        metrics: PluginMetrics | None = None,
        backend: str = "",
        events: EventSink | None = None,
        node: NodeName | None = None,
        nodes: NodeDirectory | None = None,
    ) -> None:
        self._inventory = inventory
        self._publisher = publisher
        self._interval = interval_s
        self._publish_retry = Backoff(retry_s, max(retry_s, publish_retry_max_s))
        self._hardware_retry = Backoff(retry_s, max(retry_s, hardware_retry_max_s))
        self._said: str | None = None  # the failure last logged
        self._hardware_problem: str | None = None  # why the last probe gave no inventory
        self._node = node  # the Node the hardware events are about
        self._nodes = nodes  # where the Node is looked up; None: not looked up
        self._node_problem: str | None = None  # why the Node is not known, once looked up
        self._node_found = nodes is None or node is None
        self._metrics = metrics
        self._backend = backend  # the probe's, as metrics label it
        self._events = events  # a Node Event per device whose health changed
        self._wake = threading.Event()
        self._sync_asked = threading.Event()
        self._probe_asked = threading.Event()
        self._stop = threading.Event()
        self._published = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="pool-maintainer", daemon=True)
        self._thread.start()

    def request_sync(self) -> None:
        """Republish soon (the stored slices may differ from ours); safe from any thread."""
        self._sync_asked.set()
        self._wake.set()

    def request_probe(self) -> None:
        """Re-probe the hardware now, and republish if it changed; safe from any thread."""
        self._probe_asked.set()
        self._wake.set()

    def wait_published(self, timeout: float | None = None) -> bool:
        """Whether a publish has succeeded since start (waiting up to `timeout` for one)."""
        return self._published.wait(timeout)

    def readiness_problem(self) -> str | None:
        """Why the plugin is not ready to serve claims; None when it is."""
        if self._hardware_problem is not None:
            return f"the hardware gives no inventory: {self._hardware_problem}"
        if not self._published.is_set():
            return NOT_PUBLISHED
        return self._node_problem

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT_S)

    def _run(self) -> None:
        due = True  # the first publish
        while not self._stop.is_set():
            wait = self._interval
            if due:
                retry_in = self._publish()
                due, wait = retry_in is not None, retry_in or self._interval
            woken = self._wake.wait(wait)
            if self._stop.is_set():
                return
            self._wake.clear()
            sync, probe = self._sync_asked.is_set(), self._probe_asked.is_set() or not woken
            self._sync_asked.clear()
            self._probe_asked.clear()
            changed = probe and (self._inventory_changed() or self._publisher.sharing_changed())
            due = due or sync or changed or not self._node_found

    def _publish(self) -> float | None:
        """Publish once; None when done, else the seconds until the next try."""
        try:
            self._inventory.current()  # apart, so a hardware failure backs off on its own
        except DomainError as error:
            self._hardware_changed(str(error))
            return self._failed(f"no inventory to publish: {error}", self._hardware_retry.next())
        self._hardware_retry.reset()
        self._hardware_changed(None)
        try:
            self._publisher.publish(refresh=False)
        except DomainError as error:  # keep serving; try again soon
            return self._failed(f"publishing the pool failed: {error}", self._publish_retry.next())
        except Exception:  # a bug must not end the worker: the pool would never come back
            retry_in = self._publish_retry.next()
            log.exception("publishing the pool failed, retrying in %.1fs", retry_in)
            self._count_publish(ok=False)
            return retry_in
        self._publish_retry.reset()
        if self._said is not None:
            log.info("published the pool again after: %s", self._said)
            self._said = None
        self._published.set()
        self._count_publish(ok=True)
        self._look_up_node()
        return None

    def _look_up_node(self) -> None:
        """Whether the API server knows our Node, until it does; said once per change."""
        if self._node_found or self._nodes is None or self._node is None:
            return
        try:
            self._node_found = self._nodes.node_exists(node=self._node)
        except DomainError:  # the API server's trouble: the next publish reports it
            return
        if self._node_found:
            if self._node_problem is not None:
                log.info("Node %s exists now: ready", self._node)
            self._node_problem = None
        elif self._node_problem is None:
            self._node_problem = (
                f"the API server has no Node {self._node}: --node-name (NODE_NAME) must be this "
                "node's name as the kubelet registered it"
            )
            log.error("%s; not ready until it has", self._node_problem)

    def _hardware_changed(self, problem: str | None) -> None:
        """Record whether the hardware gives an inventory; a Node Event when that changes."""
        was, self._hardware_problem = self._hardware_problem, problem
        if (was is None) == (problem is None):
            return
        if self._events is not None and self._node is not None:
            self._events.emit(hardware_event(self._node, problem))
        if problem is None:
            log.info("the hardware answers again; ready once the pool is published")

    def _failed(self, what: str, retry_in: float) -> float:
        if what != self._said:
            log.error("%s; retrying until it works, first in %.1fs", what, retry_in)
            self._said = what
        else:
            log.debug("%s; retrying in %.1fs", what, retry_in)
        self._count_publish(ok=False)
        return retry_in

    def _count_publish(self, *, ok: bool) -> None:
        if self._metrics is not None:
            self._metrics.publish_done(ok=ok)

    def _inventory_changed(self) -> bool:
        started, ok = time.monotonic(), False
        try:
            before = self._inventory.current()
            after = self._inventory.refresh()
            ok = True
            self._hardware_changed(None)
            if self._events is not None:
                for event in health_events(before, after):
                    self._events.emit(event)
            return after != before
        except DomainError as error:  # keep serving with the last good inventory
            if str(error) != self._hardware_problem:
                log.error("keeping the pool as it is: %s", error)
            self._hardware_changed(str(error))
            return False
        finally:
            if self._metrics is not None:
                seconds = time.monotonic() - started
                self._metrics.probe_done(backend=self._backend, seconds=seconds, ok=ok)


def maintained_pool(
    *,
    maintainer: PoolMaintainer,
    watcher: SliceWatcher,
    node: NodeName,
    driver: DriverName,
    hardware: HardwareProbe | None = None,
) -> Iterator[PoolMaintainer]:
    """A DI resource: maintenance and the slice watch run until the container shuts down; the
    hardware's fault announcements, where it makes them, trigger re-probes."""
    maintainer.start()
    if isinstance(hardware, FaultNotifier):
        hardware.subscribe_faults(maintainer.request_probe)
    watch = watcher.watch_slices(node=node, driver=driver, on_change=maintainer.request_sync)
    try:
        yield maintainer
    finally:
        watch.stop()
        maintainer.stop()
