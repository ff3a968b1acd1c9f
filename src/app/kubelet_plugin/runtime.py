"""The plugin process's life: restore, publish, serve in the kubelet's order, stop cleanly.

Start order is a contract with the kubelet: state is repaired before anything is served (a
prepare must never see a CDI spec the checkpoint does not back), the DRA socket serves, and only
then does the registration socket appear, so the kubelet never finds an endpoint that does not
answer. Nothing on that path needs the API server: checkpointed claims are prepared and
unprepared from the checkpoint alone, so a plugin restarted during an API outage serves at once,
and the pool is published in the background, retried until the API server answers. Shutdown
runs the other way: the registration socket goes first. A damaged checkpoint stops the start
with the file's name and is left as it is.
"""

import logging
import threading

from dependency_injector import providers

from npu_dra.app.container import Container
from npu_dra.app.kubelet_plugin.flags import Settings
from npu_dra.domain.errors import DomainError, StateError
from npu_dra.domain.profile import PROFILES

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 1.0


class StartupError(Exception):
    """The plugin cannot start; the message says why and what to look at."""


def build_container(settings: Settings) -> Container:
    container = Container()
    container.config.from_dict(settings.config())
    if settings.device_profile not in PROFILES:
        raise StartupError(
            f"unknown device profile {settings.device_profile!r}; known: {', '.join(PROFILES)}"
        )
    if settings.cluster not in _choices(container.cluster):
        raise StartupError(
            f"cluster API {settings.cluster!r} is not available in this build "
            "(--cluster memory is for tests and demos)"
        )
    if settings.hardware.kind not in _choices(container.node.hardware):
        raise StartupError(f"hardware {settings.hardware.kind!r} is not available in this build")
    try:
        container.cluster()
    except Exception as error:  # the client's config errors have no common base class
        where = settings.kubeconfig or "the in-cluster service account"
        raise StartupError(f"cannot configure the cluster API from {where}: {error}") from error
    return container


def _choices(selector: object) -> frozenset[str]:
    assert isinstance(selector, providers.Selector)
    return frozenset(selector.providers)


def _resource(provider: object) -> "providers.Resource[object]":
    assert isinstance(provider, providers.Resource)
    return provider


class KubeletPlugin:
    def __init__(self, container: Container) -> None:
        self._container = container
        self._node = container.node
        self._servers: list[object] = []

    def start(self) -> None:
        self._restore()
        try:
            self._servers = [self._node.dra_server(), self._node.registration_server()]
            health = self._node.health_server()
            self._node.metrics_server()
            self._node.event_worker()
            self._node.pool_maintenance()
        except (OSError, RuntimeError) as error:  # grpc reports a failed bind as RuntimeError
            raise StartupError(f"cannot serve: {error}") from error
        if health is not None:
            log.info("liveness on port %d", health.port)

    def serve(self, stop: threading.Event) -> None:
        """Until `stop` is set; a socket file someone deleted is listened on again."""
        while not stop.wait(WATCH_INTERVAL_S):
            self.relisten()

    def relisten(self) -> None:
        for server in (self._node.dra_server(), self._node.registration_server()):
            server.ensure_listening()

    def stop(self) -> None:
        # The registration socket first, so the kubelet stops sending work before we stop serving.
        for name in (
            "registration_server",
            "health_server",
            "metrics_server",
            "pool_maintenance",
            "dra_server",
            "event_worker",
        ):
            _resource(getattr(self._node, name)).shutdown()
        self._container.shutdown_resources()
        log.info("kubelet plugin stopped")

    def _restore(self) -> None:
        try:
            report = self._node.preparer().repair()
        except StateError as error:
            raise StartupError(
                f"{error}; nothing was overwritten: repair or move it aside"
            ) from error
        except (DomainError, ValueError) as error:
            raise StartupError(str(error)) from error
        if report.temp_files:
            log.info("restart repair: removed temp files %s", list(report.temp_files))
        for problem in report.unrepairable:
            log.error("restart repair: %s", problem)
        if report.rewritten or report.removed:
            log.info(
                "restart repair: rewrote CDI specs of %s, removed %s",
                list(report.rewritten),
                list(report.removed),
            )


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
