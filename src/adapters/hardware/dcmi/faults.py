"""DCMI's fault events: a subscription for every chip, and the codes it says are raised now.

Huawei's device plugin subscribes once for all chips (card and device -1, SubscribeAllDevice in
mind-cluster component/ascend-common/devmanager/common/constants.go) with a zeroed filter and a
callback (devmanager/dcmi/dcmi.go DcSubscribeDeviceFaultEvent, goEventFaultCallBack), and falls
back to polling the error codes where subscribing fails (ascend-device-plugin
pkg/server/manager.go subscribeNpuFaultEvent). npu-dra does the same: an event with assertion
1 (raised) adds its code to the chip's raised codes, 0 (recovered) removes it, 2 (one-off) only
asks for a re-probe; every event asks for one, so the next probe classifies the chip with the
codes DCMI lists and the codes raised here.

The callback runs on a thread of the library's; it never raises into C and never blocks on
anything but a lock. The library keeps the callback's address for the life of the process (the
header offers no unsubscribe), so that callback is one module-level function, never freed; it
hands each event to every live FaultEvents (weakly held: a dropped probe stops receiving).

Bounds: at most MAX_ERROR_CODES codes per chip and MAX_CHIPS chips are remembered (an event
past them still asks for a re-probe).
"""

import ctypes
import logging
import threading
import weakref
from collections.abc import Callable

from npu_dra.adapters.hardware.dcmi import library
from npu_dra.adapters.hardware.dcmi.fault_structs import (
    DMS_FAULT_EVENT,
    RAISED,
    RECOVERED,
    Event,
    EventFilter,
    FaultHandler,
)

log = logging.getLogger(__name__)
ALL_DEVICES = -1
MAX_CHIPS = 1024
SUBSCRIBE = "dcmi_subscribe_fault_event"


_receivers: "weakref.WeakSet[FaultEvents]" = weakref.WeakSet()
_receivers_lock = threading.Lock()


def _dispatch(pointer: "ctypes._Pointer[Event]") -> None:
    with _receivers_lock:
        receivers = list(_receivers)
    for receiver in receivers:
        receiver.on_event(pointer)


_HANDLER = FaultHandler(_dispatch)  # DCMI keeps this address for good: so does this module


class FaultEvents:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._raised: dict[int, set[int]] = {}
        self._listeners: list[Callable[[], None]] = []

    def subscribe(self, lib: ctypes.CDLL, on_fault: Callable[[], None]) -> str | None:
        """Subscribe every chip's fault events, calling `on_fault` on each (from the library's
        thread); None when subscribed, else why not."""
        if not library.offers(lib, SUBSCRIBE):
            return f"libdcmi.so has no {SUBSCRIBE}"
        with self._lock:
            self._listeners.append(on_fault)
            if len(self._listeners) > 1:
                return None
        with _receivers_lock:
            _receivers.add(self)
        code = lib.dcmi_subscribe_fault_event(ALL_DEVICES, ALL_DEVICES, EventFilter(), _HANDLER)
        if code != library.OK:
            with _receivers_lock:
                _receivers.discard(self)
            with self._lock:
                self._listeners.clear()
            return str(library.DcmiError(SUBSCRIBE, code))
        return None

    def raised(self, logic_id: int) -> frozenset[int]:
        """The codes events have raised on the chip and not recovered."""
        with self._lock:
            return frozenset(self._raised.get(logic_id, ()))

    def on_event(self, pointer: "ctypes._Pointer[Event]") -> None:
        """One event from the library's thread: recorded, then every listener called."""
        try:
            self._record(pointer.contents)
            with self._lock:
                listeners = list(self._listeners)
            for listener in listeners:
                listener()
        except Exception:  # an exception must never unwind into the library's thread
            log.exception("handling a DCMI fault event failed")

    def _record(self, event: Event) -> None:
        if event.type != DMS_FAULT_EVENT:
            return
        fault = event.event_t.dms_event
        logic, code = int(fault.deviceid), int(fault.event_id)
        log.debug(
            "DCMI fault event: chip logic id %d code %08X severity %d assertion %d",
            logic, code, fault.severity, fault.assertion,
        )  # fmt: skip
        with self._lock:
            codes = self._raised.get(logic)
            if codes is None and fault.assertion == RAISED and len(self._raised) < MAX_CHIPS:
                codes = self._raised[logic] = set()
            if codes is None:
                return
            if fault.assertion == RAISED and len(codes) < library.MAX_ERROR_CODES:
                codes.add(code)
            elif fault.assertion == RECOVERED:
                codes.discard(code)
