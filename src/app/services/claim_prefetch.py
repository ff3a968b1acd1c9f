"""Claims read when their pod is bound to this node, so the prepare finds them ready
(`--claim-prefetch`, docs/operating.md "Claim prefetch").

The kubelet calls NodePrepareResources only for a pod bound to this node, after reading the
claim itself and checking the pod is in its status.reservedFor (k8s.io/kubernetes v1.34.3
pkg/kubelet/cm/dra/manager.go, prepareResources). The plugin watches the same pods (the
kubelet's own field selector, spec.nodeName) and reads each claim generated for a pod once the
pod is bound; the prepare then pays no API round trip. Why the claim read early is the claim
the prepare must act on:

- The scheduler writes a claim's allocation and reservation before it binds the pod (PreBind,
  pkg/scheduler/framework/plugins/dynamicresources), and the read is a quorum GET made after
  the binding was seen, so it sees both.
- Only a claim generated for the pod is kept: controlled by it (ownerReferences, the
  resourceclaim controller's mark), reserved for it, allocated, with results for this driver.
  A claim that names the pod in reservedFor cannot lose its allocation while it does: the API
  server refuses `allocation` cleared or changed while `reservedFor` is not empty
  (pkg/apis/resource/validation), and the resourceclaim controller takes a pod out of
  reservedFor only once it is deleted or terminal (pkg/controller/resourceclaim).
- So the entry is kept only while this watch has the pod bound and not done; it goes when the
  pod is deleted, being deleted or terminal, when the claim is unprepared, when the watch lists
  again without the pod bound and not done (what a list may show was missed is the pod's end:
  a pod, by its UID, never runs again once done, so one listed running was running all along,
  and its claims are not read again), and TTL_S after its read. The prepare uses it only for
  the same namespace, name and UID; anything else is read from the API server as before.

What remains: a pod may name another pod's generated claim by name (the API allows it; the
scheduler and the kubelet check the owner only for template references). While both run, the
claim is reserved for both, and an entry is kept only for a claim reserved for its owner alone.
Once the owner ended, the resourceclaim controller deletes the claim when nobody holds it
(syncClaim: "deleting unused generated claim"), so a new allocation of the same claim needs the
scheduler to win that race; the entry is then stale only if the kubelet asks for it within TTL_S
of the read and before this watch delivered the owner's end, which the controller, a scheduling
cycle and a binding must all have reacted to first.
"""

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import attrs

from npu_dra.app.services.claim_fetch import ReadWorkers
from npu_dra.domain.claims import ClaimRef, NodePod, ResourceClaim
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import ClaimName, ClaimUID, DriverName, NodeName
from npu_dra.domain.ports import NodePodSource, Stoppable

log = logging.getLogger(__name__)

TTL_S = 120.0  # a kubelet prepares a bound pod's claims within seconds
MAX_ENTRIES = 4096  # claims kept at once (the kubelet runs at most 110 pods by default)
MAX_READS = 8  # reads at once; a pod beyond them is read at prepare
AWAIT_READ_S = 1.0  # a prepare waits this long for a read of its claim already under way


@attrs.frozen
class _Entry:
    claim: ResourceClaim
    pod: str
    read_at: float


class ClaimPrefetch:
    def __init__(
        self,
        source: NodePodSource,
        *,
        node: NodeName,
        driver: DriverName,
        ttl_s: float = TTL_S,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
        submit: Callable[[Callable[[], None]], bool] | None = None,
    ) -> None:
        self._source, self._node, self._driver = source, node, driver
        self._ttl, self._max, self._clock = ttl_s, max_entries, clock
        self._lock = threading.Lock()
        self._entries: dict[ClaimUID, _Entry] = {}  # oldest first
        self._live: set[str] = set()  # pods bound here and not done
        self._asked: set[tuple[str, ClaimName]] = set()  # (pod, claim) read or being read
        self._reading: dict[tuple[str, ClaimName], threading.Event] = {}  # set once read
        # runs a read on a worker, or answers False when all are busy
        self._submit_read = submit or ReadWorkers(max_threads=MAX_READS).try_submit
        self.hits = self.misses = 0

    def watch(self) -> Stoppable:
        return self._source.watch_node_pods(
            node=self._node, on_list=self.listed, on_pod=self.changed
        )

    def listed(self, pods: Sequence[NodePod]) -> None:
        """The watch (re)listed: what it may have missed is a pod's end, so what is kept is only
        what belongs to a pod listed bound and not done (a pod, by UID, never runs again once
        done: it was live all along), and its claims are not read again."""
        live = {pod.uid for pod in pods if not pod.done}
        with self._lock:
            self._live &= live
            self._drop(lambda entry: entry.pod not in live)
            self._asked = {asked for asked in self._asked if asked[0] in live}
        for pod in pods:
            self.changed(pod)

    def changed(self, pod: NodePod) -> None:
        with self._lock:
            if pod.done:
                self._live.discard(pod.uid)
                self._drop(lambda entry: entry.pod == pod.uid)
                self._asked = {asked for asked in self._asked if asked[0] != pod.uid}
                return
            self._live.add(pod.uid)
            new = [name for name in pod.claims if (pod.uid, name) not in self._asked]
            self._asked.update((pod.uid, name) for name in new)
            for name in new:
                self._reading.setdefault((pod.namespace, name), threading.Event())
        for name in new:
            self._submit(pod, name)

    def _submit(self, pod: NodePod, name: ClaimName) -> None:
        if not self._submit_read(lambda: self._read(pod, name)):
            with self._lock:
                self._asked.discard((pod.uid, name))  # all readers busy: read at prepare
            self._read_ended(pod, name)

    def take(self, ref: ClaimRef) -> ResourceClaim | None:
        """The claim read for `ref`'s pod, if it is still known right (once: a prepare that
        fails is retried with a read); None: read it."""
        self._await_read(ref)
        with self._lock:
            entry = self._entries.pop(ref.uid, None)
            fresh = entry is not None and self._clock() - entry.read_at <= self._ttl
            if entry is None or not fresh or entry.pod not in self._live or entry.claim.ref != ref:
                self.misses += 1
                return None
            self.hits += 1
            return entry.claim

    def _await_read(self, ref: ClaimRef) -> None:
        """A read of this claim already under way (the kubelet asked right after the binding)
        is waited for, at most AWAIT_READ_S, instead of reading the claim a second time."""
        with self._lock:
            key = (ref.namespace, ref.name)
            reading = None if ref.uid in self._entries else self._reading.get(key)
        if reading is not None:
            reading.wait(AWAIT_READ_S)

    @property
    def ready(self) -> int:
        """Claims read ahead and not yet taken."""
        with self._lock:
            return len(self._entries)

    def forget(self, uids: Iterable[ClaimUID]) -> None:
        with self._lock:
            for uid in uids:
                self._entries.pop(uid, None)

    def _read(self, pod: NodePod, name: ClaimName) -> None:
        try:
            self._read_now(pod, name)
        finally:
            self._read_ended(pod, name)

    def _read_ended(self, pod: NodePod, name: ClaimName) -> None:
        with self._lock:
            reading = self._reading.pop((pod.namespace, name), None)
        if reading is not None:
            reading.set()

    def _read_now(self, pod: NodePod, name: ClaimName) -> None:
        try:
            claim = self._source.read_claim(namespace=pod.namespace, name=name)
        except DomainError as error:
            log.debug(
                "prefetch of claim %s/%s failed (read at prepare): %s", pod.namespace, name, error
            )
            with self._lock:
                self._asked.discard((pod.uid, name))  # the pod's next change tries again
            return
        if not self._usable(claim, pod):
            return
        with self._lock:
            if pod.uid not in self._live:  # done (or missed ending) while it was read
                return
            self._entries.pop(claim.ref.uid, None)
            self._entries[claim.ref.uid] = _Entry(claim, pod.uid, self._clock())
            while len(self._entries) > self._max:
                del self._entries[next(iter(self._entries))]

    def _usable(self, claim: ResourceClaim, pod: NodePod) -> bool:
        """Generated for `pod`, reserved for it alone, allocated here with results for us."""
        allocation = claim.allocation
        return (
            claim.ref.namespace == pod.namespace
            and claim.owner == pod.uid
            and claim.reserved_for == (pod.uid,)
            and allocation is not None
            and allocation.node_name in (None, self._node)
            and bool(claim.results_for(self._driver))
        )

    def _drop(self, doomed: Callable[[_Entry], bool]) -> None:
        """Holding the lock."""
        for uid in [uid for uid, entry in self._entries.items() if doomed(entry)]:
            del self._entries[uid]
