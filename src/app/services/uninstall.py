"""Uninstalling from a node: the plugin outlives the pods that use its devices.

When the DaemonSet that runs the plugin is deleted (`helm uninstall`, `kubectl delete -f`), its
pod gets SIGTERM a moment later and no plugin of the driver comes back. The kubelet unprepares a
claim only through a registered plugin, and a pod whose claims are not unprepared stays
Terminating (the kubelet's PodCouldHaveRunningContainers), with its CDI spec and checkpoint
entry left on the node. So on SIGTERM during an uninstall the plugin refuses new prepares, keeps
serving unprepares until its checkpoint holds no claim, removes the CDI specs left, and only then
stops (its sockets go with its server). Any other SIGTERM (an upgrade, a restart, a drain) stops
at once, the state kept for the next instance; so does a drain whose DaemonSet comes back (installed
anew before the pods ended): the uninstall is cancelled and the gate opens again.

The DaemonSet's fate comes from a watch opened at start (adapters/cluster/kube/daemonset_watch):
by the time its pod gets SIGTERM, the uninstall has already deleted the plugin's ServiceAccount
and RBAC, so its token could no longer ask, but a watch already open is not authorized again.
"""

import logging
import threading
import time
from collections.abc import Mapping, Sequence

from npu_dra.domain.backoff import Backoff
from npu_dra.domain.claims import ClaimRef
from npu_dra.domain.ids import ClaimUID
from npu_dra.domain.ports import CallerGone, CdiStore, CheckpointStore, NodeClaims
from npu_dra.domain.prepare import ClaimOutcome

log = logging.getLogger(__name__)

UNINSTALLING = "npu-dra is being uninstalled from this node: it prepares no new claims"
POLL_S = 1.0
LOG_FIRST_S, LOG_MAX_S = 10.0, 300.0
SHOWN_CLAIMS = 10


class DaemonSetFate:
    """Whether the DaemonSet running this plugin was deleted, from its watch's reports. Only a
    DaemonSet once seen standing counts: one never found is a wrong --daemonset-name (warned
    about), and one created again (deleted with --cascade=orphan, applied anew) keeps its pods."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._seen = self._gone = self._warned = False

    @property
    def uninstalling(self) -> bool:
        with self._lock:
            return self._gone

    def report(self, standing: bool) -> None:
        with self._lock:
            if standing:
                if self._gone:
                    log.info("DaemonSet %s is back: not uninstalling", self._name)
                self._seen, self._gone = True, False
            elif self._seen and not self._gone:
                log.info("DaemonSet %s deleted: this plugin is being uninstalled", self._name)
                self._gone = True
            elif not self._seen and not self._warned:
                log.warning(
                    "DaemonSet %s not found: check --daemonset-name and --pod-namespace; "
                    "until it is, an uninstall stops this plugin before the pods using its "
                    "devices end",
                    self._name,
                )
                self._warned = True


class UninstallGate:
    """The kubelet's calls (a NodeClaims) with a door that closes: once closed, a claim the
    checkpoint does not hold gets UNINSTALLING in its own slot; the kubelet's repeated prepare
    of a claim already prepared, and every unprepare, go through."""

    def __init__(self, inner: NodeClaims, checkpoints: CheckpointStore) -> None:
        self._inner, self._checkpoints = inner, checkpoints
        self._closed = threading.Event()

    def close(self) -> None:
        self._closed.set()

    def open(self) -> None:
        """The uninstall was cancelled: new claims are prepared again."""
        self._closed.clear()

    def prepare(
        self, refs: Sequence[ClaimRef], caller_gone: CallerGone | None = None
    ) -> Mapping[ClaimUID, ClaimOutcome]:
        if not self._closed.is_set():
            return self._inner.prepare(refs, caller_gone)
        prepared = self._checkpoints.load().claims
        known = [r for r in refs if r.uid in prepared]
        answers = dict(self._inner.prepare(known, caller_gone)) if known else {}
        refused = {r.uid: ClaimOutcome(error=UNINSTALLING) for r in refs if r.uid not in answers}
        return answers | refused

    def unprepare(self, refs: Sequence[ClaimRef]) -> Mapping[ClaimUID, str | None]:
        return self._inner.unprepare(refs)


class Drain:
    """What the plugin does on SIGTERM during an uninstall, before it stops."""

    def __init__(
        self,
        *,
        checkpoints: CheckpointStore,
        cdi: CdiStore,
        gate: UninstallGate,
        poll_s: float = POLL_S,
    ) -> None:
        self._checkpoints, self._cdi, self._gate = checkpoints, cdi, gate
        self._poll_s = poll_s

    def run(self, interrupted: threading.Event, fate: DaemonSetFate | None = None) -> bool:
        """Close the gate, wait until no claim is prepared, remove the CDI specs left; False
        (everything kept) if `interrupted` is set first, or if the DaemonSet comes back (the
        uninstall cancelled: the gate opens again, and the plugin stops as on any SIGTERM)."""
        self._gate.close()
        said, backoff, next_log = "", Backoff(LOG_FIRST_S, LOG_MAX_S), 0.0
        while claims := self._checkpoints.load().claims:
            if self._cancelled(fate):
                return False
            waiting = _waiting_for([c.ref for c in claims.values()])
            if waiting != said or time.monotonic() >= next_log:
                log.info("uninstalling: waiting for %s", waiting)
                said, next_log = waiting, time.monotonic() + backoff.next()
            if interrupted.wait(self._poll_s):
                log.warning("stopped while uninstalling: %s still prepared, kept", len(claims))
                return False
        if self._cancelled(fate):
            return False
        left = sorted(self._cdi.claim_uids())
        for uid in left:
            self._cdi.remove(uid=uid)
        log.info("uninstalled: no claim prepared, %d CDI spec(s) of the driver removed", len(left))
        return True

    def _cancelled(self, fate: DaemonSetFate | None) -> bool:
        if fate is None or fate.uninstalling:
            return False
        self._gate.open()
        log.warning(
            "uninstall cancelled, the DaemonSet is back: new claims are prepared again, and the "
            "plugin stops as on any other SIGTERM, %d claim(s) kept for the next instance",
            len(self._checkpoints.load().claims),
        )
        return True


def _waiting_for(refs: Sequence[ClaimRef]) -> str:
    names = sorted(f"{r.namespace}/{r.name}" for r in refs)
    more = f" and {len(names) - SHOWN_CLAIMS} more" if len(names) > SHOWN_CLAIMS else ""
    shown = ", ".join(names[:SHOWN_CLAIMS])
    return f"{len(names)} claim(s) to be unprepared (their pods to end): {shown}{more}"
