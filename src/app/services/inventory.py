"""The node's last known inventory.

Prepare paths read it from memory and never run npu-smi; only refresh() probes hardware, from the
publisher at start and from the periodic health loop. `known()` is the inventory without ever
probing or waiting (what the kubelet's calls use under the state lock), `settled()` the first
probe's answer (waiting for it, never starting a second), `problem` why the last probe failed.

`prefetch()` starts the first probe in the background (the kubelet plugin calls it first thing
at start), so npu-smi runs while the process imports and starts its gRPC servers instead of after
them. Whoever asks for the inventory meanwhile waits for that probe; if it failed, `current()`
probes again itself, so a probe error reaches its caller exactly as without the prefetch.
"""

import logging
import threading

from npu_dra.domain.device import NodeInventory
from npu_dra.domain.errors import DomainError, InventoryError
from npu_dra.domain.ports import HardwareProbe

log = logging.getLogger(__name__)


class InventoryCache:
    def __init__(self, probe: HardwareProbe) -> None:
        self._probe = probe
        self._current: NodeInventory | None = None
        self._lock = threading.Lock()
        self._prefetched: threading.Event | None = None
        self._problem: str | None = None
        self._flight: threading.Event | None = None  # probed_once's probe, while it runs

    def prefetch(self) -> None:
        """Start the first probe in the background (once; no-op if one already ran)."""
        with self._lock:
            if self._prefetched is not None or self._current is not None:
                return
            done = self._prefetched = threading.Event()

        def first_probe() -> None:
            try:
                self.refresh()
            except Exception as error:  # current() probes again and raises it to its caller
                log.debug("the prefetched probe failed: %s", error)
            finally:
                done.set()

        threading.Thread(target=first_probe, name="inventory-prefetch", daemon=True).start()

    def current(self) -> NodeInventory:
        with self._lock:
            if self._current is not None:
                return self._current
            prefetched = self._prefetched
        if prefetched is not None:
            prefetched.wait()
            with self._lock:
                if self._current is not None:
                    return self._current
        return self.refresh()

    def known(self) -> NodeInventory | None:
        """The last good inventory, None before one: never probes, never waits."""
        with self._lock:
            return self._current

    def settled(self) -> NodeInventory | None:
        """The first probe's answer, None if it failed: waits for the prefetched probe, or runs
        one where none was started; never a second one, so this costs one probe timeout at most."""
        with self._lock:
            if self._current is not None:
                return self._current
            prefetched = self._prefetched
        if prefetched is not None:
            prefetched.wait()
            return self.known()
        try:
            return self.refresh()
        except DomainError:
            return None

    def known_or_error(self) -> NodeInventory:
        """The known inventory, never probing (callers hold a lock others wait on): an
        InventoryError saying what the hardware answered where there is none yet."""
        inventory = self.known()
        if inventory is None:
            problem = self.problem or "its first probe has not finished"
            raise InventoryError(f"the hardware has not answered yet ({problem}); try again")
        return inventory

    def probed_once(self) -> None:
        """Probe if no inventory is known yet (outside any lock); a failure is left for
        known_or_error to report. Callers meanwhile share that probe instead of each starting
        one: many new claims on a hung npu-smi cost one probe timeout, not one each."""
        with self._lock:
            if self._current is not None:
                return
            flight, mine = self._flight, self._flight is None
            if flight is None:
                flight = self._flight = threading.Event()
        if not mine:
            flight.wait()
            return
        try:
            self.current()
        except DomainError as error:
            log.debug("no inventory yet: %s", error)
        finally:
            with self._lock:
                self._flight = None
            flight.set()

    @property
    def problem(self) -> str | None:
        """Why the last probe failed; None once one succeeded."""
        with self._lock:
            return self._problem

    def refresh(self) -> NodeInventory:
        """Probe again; on failure the previous inventory stays and the error propagates."""
        try:
            fresh = self._probe.probe()
        except DomainError as error:
            with self._lock:
                self._problem = str(error)
            raise
        with self._lock:
            changed = self._current != fresh
            self._current, self._problem = fresh, None
        if changed:
            log.info("inventory of %s: %d device(s)", fresh.node, len(fresh.devices))
        return fresh
