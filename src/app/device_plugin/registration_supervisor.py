"""Keeping each resource served and registered for as long as the process runs.

The kubelet forgets a device plugin whenever it restarts: it wipes its directory (our sockets
too) and creates a new `kubelet.sock`. A supervisor polls a few times a second; a new
`kubelet.sock` or a vanished socket of ours rebuilds the server and registers again at once, so
the kubelet sees us within a second of coming back. A ListAndWatch stream that ended while the
kubelet stayed up also leads to a new Register, since the kubelet has dropped us. Registration
is always: serve first, then Register (the kubelet dials back before it answers).
"""

import logging
import threading
import time
from collections.abc import Sequence

from npu_dra.adapters.grpc.device_plugin.registration_client import RegistrationFailed, register
from npu_dra.adapters.grpc.device_plugin.server import SocketServer
from npu_dra.adapters.grpc.device_plugin.servicer import DevicePluginService
from npu_dra.adapters.grpc.device_plugin.watcher import KubeletSocketWatcher
from npu_dra.app.device_plugin.health_monitor import HealthMonitor
from npu_dra.domain.backoff import Backoff

log = logging.getLogger(__name__)

SUPERVISE_S = 0.25
RETRY_S = 1.0  # the first wait after a failed Register while kubelet.sock stays the same
RETRY_MAX_S = 30.0  # the waits double (jittered) up to this
STREAM_GRACE_S = 3.0  # no ListAndWatch stream for this long after one ended: register again


class ResourcePlugin:
    """One extended resource: its service, the server on its socket, its registration state."""

    def __init__(
        self, resource_name: str, service: DevicePluginService, server: SocketServer
    ) -> None:
        self.resource_name = resource_name
        self.service = service
        self.server = server
        self.registered = threading.Event()
        self._retry_at = 0.0
        self._backoff = Backoff(RETRY_S, RETRY_MAX_S)
        self._said: str | None = None  # the registration failure last logged

    @property
    def endpoint(self) -> str:
        return self.server.path.name

    def serve(self) -> None:
        self.server.start()
        self._reregister()

    def supervise(self, kubelet: KubeletSocketWatcher, *, kubelet_restarted: bool) -> None:
        if kubelet_restarted or self.server.gone():
            log.info("%s: kubelet restarted or socket gone; serving anew", self.resource_name)
            self.server.restart()
            self._reregister()
        lost = self.service.stream_lost_for()
        if lost is not None and lost > STREAM_GRACE_S and self.registered.is_set():
            log.info(
                "%s: no ListAndWatch stream for %.1fs; registering again", self.resource_name, lost
            )
            self.service.forget_lost_stream()
            self._reregister()
        if not self.registered.is_set() and time.monotonic() >= self._retry_at and kubelet.exists():
            self._try_register(kubelet)

    def stop(self) -> None:
        self.server.stop()

    def _reregister(self) -> None:
        self.registered.clear()
        self._retry_at = 0.0

    def _try_register(self, kubelet: KubeletSocketWatcher) -> None:
        try:
            register(kubelet.path, endpoint=self.endpoint, resource_name=self.resource_name)
        except RegistrationFailed as error:
            wait = self._backoff.next()
            level = logging.WARNING if str(error) != self._said else logging.DEBUG
            log.log(level, "%s; retrying in %.1fs (less often after)", error, wait)
            self._said = str(error)
            self._retry_at = time.monotonic() + wait
            return
        self._backoff.reset()
        self._said = None
        log.info(
            "registered %s at %s (endpoint %s)", self.resource_name, kubelet.path, self.endpoint
        )
        self.registered.set()


class DevicePluginRuntime:
    def __init__(
        self,
        plugins: Sequence[ResourcePlugin],
        *,
        kubelet: KubeletSocketWatcher,
        health: HealthMonitor,
    ) -> None:
        self.plugins = tuple(plugins)
        self._kubelet = kubelet
        self._health = health
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Serve every resource, then register and supervise them in background threads."""
        for plugin in self.plugins:
            plugin.serve()
        for name, target in (("dp-supervisor", self._supervise), ("dp-health", self._watch)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        self._health.wake()
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        for plugin in self.plugins:
            plugin.stop()

    def run(self, until: threading.Event) -> None:
        self.start()
        try:
            until.wait()
        finally:
            self.stop()

    def _supervise(self) -> None:
        while not self._stop.is_set():
            restarted = self._kubelet.recreated()
            for plugin in self.plugins:
                try:
                    plugin.supervise(self._kubelet, kubelet_restarted=restarted)
                except Exception:  # one broken resource must not stop the others' supervision
                    log.exception("%s: supervision failed; trying again", plugin.resource_name)
            self._stop.wait(SUPERVISE_S)

    def _watch(self) -> None:
        self._health.run(self._stop)
