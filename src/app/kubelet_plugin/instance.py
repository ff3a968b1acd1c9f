"""Which plugin instance this process is on its node: the names of its sockets, and whether its
state changes must be serialized with another instance's.

The kubelet (1.33 and newer) can run two instances of one DRA driver side by side, when each
registers under its own socket names: the old pod keeps serving while the new one starts, and
the kubelet moves to the new one once it registered ("Seamless Upgrade" in the kubelet's
pkg/kubelet/pluginmanager/pluginwatcher/README.md). The names are the Go kubeletplugin helper's
(k8s.io/dynamic-resource-allocation kubeletplugin, RollingUpdate): `<driver>-<pod uid>-reg.sock`
and `dra-<pod uid>.sock`, where one instance uses `<driver>-reg.sock` and `dra.sock`. Two
instances share the data directory (checkpoint, CDI specs), so their state changes are
serialized through a file lock there, `serialize.lock`, as that helper does (what it covers,
and what not: app/services/instance_state_lock.py).

An older kubelet knows one endpoint per driver: a second registration replaces the first, and
the first one's socket going away deregisters the driver. So per-pod names are used only where
the kubelet is new enough: `--seamless-upgrade auto` (the default) asks the API server for the
Node's kubeletVersion, once, at start, within LOOKUP_S; an answer it cannot read, or none in
time, means the one-instance names (said in the log). `on` trusts the operator; `off` never.
Per-pod names also need `--pod-uid` (POD_UID, from the downward API).
"""

import logging
import re
import threading
from collections.abc import Callable

import attrs

log = logging.getLogger(__name__)

LOOKUP_S = 5.0
SEAMLESS_SINCE = (1, 33)  # the kubelet release that keeps several endpoints per driver
LOCK_FILE = "serialize.lock"
UNPREPARED_DIR = "unprepared"  # unprepares the instances tell each other (adapters/cancel_marks)
_VERSION = re.compile(r"v?(\d+)\.(\d+)")


@attrs.frozen
class PluginInstance:
    uid: str = ""  # the pod's UID when its sockets carry it; "" for the one-instance names

    @property
    def seamless(self) -> bool:
        """Whether another instance may serve beside this one (then state changes are
        serialized across both)."""
        return bool(self.uid)

    def registration_socket_name(self, driver: str) -> str:
        return f"{driver}-{self.uid}-reg.sock" if self.uid else f"{driver}-reg.sock"

    def dra_socket_name(self) -> str:
        return f"dra-{self.uid}.sock" if self.uid else "dra.sock"


def supports_seamless(kubelet_version: str) -> bool | None:
    """Whether a kubelet of this version keeps two endpoints of a driver; None if unreadable."""
    found = _VERSION.match(kubelet_version.strip())
    if found is None:
        return None
    return (int(found[1]), int(found[2])) >= SEAMLESS_SINCE


def plugin_instance(
    mode: str, pod_uid: str, kubelet_version: Callable[[], str | None] | None
) -> PluginInstance:
    """The instance `--seamless-upgrade` (`mode`) and `--pod-uid` make; `kubelet_version` asks
    the API server (None: no API server to ask)."""
    if mode == "off":
        return PluginInstance()
    if not pod_uid:
        if mode == "on":
            log.warning("--seamless-upgrade=on needs --pod-uid (POD_UID): one-instance sockets")
        return PluginInstance()
    if mode == "on":
        return PluginInstance(pod_uid)
    why = _not_seamless_because(kubelet_version)
    if why is not None:
        log.info("seamless upgrades off, one-instance socket names: %s", why)
        return PluginInstance()
    log.info("seamless upgrades on: sockets named for pod %s", pod_uid)
    return PluginInstance(pod_uid)


def _not_seamless_because(kubelet_version: Callable[[], str | None] | None) -> str | None:
    if kubelet_version is None:
        return "no API server to ask for the kubelet's version"
    version = _bounded(kubelet_version)
    if isinstance(version, Exception):
        return f"the kubelet's version could not be read in {LOOKUP_S:.0f}s ({version})"
    if version is None:
        return "the API server has no Node of this --node-name"
    if supports_seamless(version) is None:
        return f"kubelet version {version[:40]!r} cannot be read"
    if not supports_seamless(version):
        return f"kubelet {version} keeps one endpoint per driver (1.33 or newer keeps two)"
    return None


def _bounded(ask: Callable[[], str | None]) -> str | Exception | None:
    """`ask()` on a daemon thread, waited for LOOKUP_S at most (an API server that does not
    answer must not hold the start: the plugin serves from its checkpoint during outages)."""
    answer: list[str | Exception | None] = []

    def run() -> None:
        try:
            answer.append(ask())
        except Exception as error:  # the adapter's errors, reported as the reason
            answer.append(error)

    thread = threading.Thread(target=run, name="kubelet-version", daemon=True)
    thread.start()
    thread.join(LOOKUP_S)
    return answer[0] if answer else TimeoutError("no answer")
