"""`npu-dra kubelet-plugin`'s runner, the plugin process's life: restore, publish, serve in the
kubelet's order, stop cleanly.

Start order is a contract with the kubelet: state is repaired before anything is served (a
prepare must never see a CDI spec the checkpoint does not back), the DRA socket serves, and only
then does the registration socket appear, so the kubelet never finds an endpoint that does not
answer. Nothing on that path needs the API server or npu-smi: checkpointed claims are prepared and
unprepared from the checkpoint alone, so a plugin restarted during an API outage, or on hardware
that fails, hangs or answers garbage, serves at once; the pool is published in the background,
retried until the API server answers, and what needs the hardware (specs recomputed, vNPUs
brought in step) runs in the background too, with back-off (app/services/hardware_reconcile.py).
Only a missing CDI spec waits for the first probe, once, bounded by --probe-timeout. Shutdown
runs the other way: the registration socket goes first; during an uninstall, only once no claim
is prepared any more (app/services/uninstall.py). A damaged checkpoint stops the start
with the file's name and is left as it is.
"""

import logging
import threading
import time
from typing import TYPE_CHECKING, cast

from npu_dra.app.container import Container, container_for
from npu_dra.app.heap import freeze_startup_heap
from npu_dra.app.options import Settings
from npu_dra.app.services.hardware_reconcile import HardwareReconcile
from npu_dra.app.services.restart_repair import log_report
from npu_dra.domain.errors import DomainError, StateError

if TYPE_CHECKING:
    from dependency_injector import providers

    from npu_dra.adapters.grpc.socket_watch import SocketWatch

log = logging.getLogger(__name__)

RECHECK_S = 60.0  # a socket check even with no inotify event: a backstop, not the mechanism
FREEZE_AFTER_S = 30.0  # the start-up heap is frozen by then even if no publish succeeded


class StartupError(Exception):
    """The plugin cannot start; the message says why and what to look at."""


def build_container(settings: Settings) -> Container:
    """The composition root for `settings`, its cluster API configured (or a StartupError)."""
    container = container_for(settings)
    # npu-smi runs while the API client is imported and configured (~0.4 s of imports)
    container.node.inventory().prefetch()
    try:
        container.cluster()
    except Exception as error:  # the client's config errors have no common base class
        where = settings.kubeconfig or "the in-cluster service account"
        raise StartupError(f"cannot configure the cluster API from {where}: {error}") from error
    return container


class KubeletPlugin:
    def __init__(self, container: Container) -> None:
        self._container = container
        self._node = container.node
        self._reconcile: HardwareReconcile | None = None

    def start(self) -> None:
        self._node.inventory().prefetch()  # a no-op when build_container started it
        try:
            self._node.dra_api_lock()  # this node runs no classic device plugin
        except DomainError as error:
            raise StartupError(str(error)) from error
        self._restore()
        self._reconcile = HardwareReconcile(
            attempt=self._node.reboot().recorded(self._node.preparer().repair_hardware),
            what="vNPU reconcile" if self._node.vnpu_table() is not None else "CDI spec check",
            node=self._node.node_name(),
            events=self._node.event_sink(),
        )
        if self._node.reboot().new_boot() and self._node.preparer().prepared().claims:
            self._reconcile.run_once()  # before serving: specs and vNPUs back for restarts
        try:
            # The DRA and registration sockets, on one server: the kubelet dials the DRA
            # endpoint as soon as it sees the registration socket, and finds it answering.
            self._node.plugin_server()
            # Publishing next: what follows is not needed before the pool is visible, and the
            # publish's API calls overlap it.
            self._node.pool_maintenance()
            self._node.dead_instances_removed()
            liveness = self._node.liveness_server()
            self._node.event_worker()
            self._node.metrics_server()
            self._node.uninstall_watch()
        except (OSError, RuntimeError, DomainError) as error:  # grpc: a failed bind
            raise StartupError(f"cannot serve: {error}") from error
        if liveness is not None:
            log.info("liveness on port %d", liveness.port)
        self._reconcile.start()

    def serve(self, stop: threading.Event) -> None:
        """Until `stop` is set; a socket file someone deleted is listened on again. Nothing
        wakes while all is well: a thread sleeps on inotify for the sockets' directories."""
        from npu_dra.adapters.grpc.socket_watch import SocketWatch

        watch = SocketWatch(self._node.plugin_server().paths)
        watcher = threading.Thread(
            target=self._relisten_on_changes, args=(watch,), name="socket-watch", daemon=True
        )
        watcher.start()
        try:
            self._freeze_once_published(stop)
            stop.wait()
            self._drain_if_uninstalling(stop)
        finally:
            watch.close()
            watcher.join()
            watch.release()

    def _drain_if_uninstalling(self, stop: threading.Event) -> None:
        """SIGTERM during an uninstall (app/services/uninstall.py): serve unprepares until no
        claim is prepared. `stop` is cleared first, so a second SIGTERM or SIGINT ends it."""
        fate = self._node.uninstall_watch()
        if fate is None or not fate.uninstalling:
            return
        stop.clear()
        # Nothing to publish any more (the uninstall took the plugin's RBAC); the kubelet wipes
        # the driver's slices 30 s after its last plugin is gone.
        cast("providers.Resource[object]", self._node.pool_maintenance).shutdown()
        self._node.uninstall_drain().run(interrupted=stop, fate=fate)

    def _freeze_once_published(self, stop: threading.Event) -> None:
        """Freeze the start-up heap (app/heap.py) once the pool is published, or after
        FREEZE_AFTER_S without an API server: done at once, its full collection held the GIL
        while the first publish ran, ~0.1 s later to visible here."""
        maintainer = self._node.maintainer()
        deadline = time.monotonic() + FREEZE_AFTER_S
        while not stop.is_set() and time.monotonic() < deadline:
            if maintainer.wait_published(timeout=0.5):
                break
        if not stop.is_set():
            freeze_startup_heap()

    def _relisten_on_changes(self, watch: "SocketWatch") -> None:
        """The watch is set when it is built: checking after it is, then after each change,
        misses no deletion."""
        while not watch.closed:
            self.relisten()
            watch.wait(timeout=RECHECK_S)

    def relisten(self) -> None:
        self._node.plugin_server().ensure_listening()

    def stop(self) -> None:
        # The node's servers and publishing first (the registration socket goes before the DRA
        # socket it announces, so the kubelet stops sending work before we stop serving); then
        # what they used, the API client.
        if self._reconcile is not None:
            self._reconcile.stop()
        self._container.node.container.shutdown_resources()
        self._container.shutdown_resources()
        log.info("kubelet plugin stopped")

    def _restore(self) -> None:
        """The repair that needs no hardware (restart_repair.before_serving)."""
        try:
            report = self._node.preparer().repair_state()
        except StateError as error:
            raise StartupError(
                f"{error}; nothing was overwritten: repair or move it aside"
            ) from error
        except (DomainError, ValueError) as error:
            raise StartupError(str(error)) from error
        log_report(report, "restart repair:")


def run(settings: Settings, stop: threading.Event) -> int:
    """Run until `stop` is set; 0 after a clean stop, 1 if the plugin could not start."""
    try:
        plugin = KubeletPlugin(build_container(settings))
    except StartupError as error:
        log.error("cannot start: %s", error)
        return 1
    try:
        plugin.start()
        log.info("kubelet plugin %s serving on node %s", settings.driver_name, settings.node_name)
        plugin.serve(stop)
    except StartupError as error:
        log.error("cannot start: %s", error)
        return 1
    finally:
        plugin.stop()
    return 0
