"""DCMI's fault events: the stand-in announces a chip's codes as they change, DcmiProbe counts
what events raised until they recover, and a library that cannot subscribe leaves health polled."""

import ctypes
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from npu_dra.adapters.hardware.dcmi.fault_structs import (
    DMS_FAULT_EVENT,
    ONE_OFF,
    RAISED,
    RECOVERED,
    Event,
)
from npu_dra.adapters.hardware.dcmi.faults import FaultEvents
from npu_dra.adapters.hardware.dcmi.library import MAX_ERROR_CODES
from npu_dra.adapters.hardware.dcmi.probe import DcmiProbe
from npu_dra.domain.device import Health
from npu_dra.domain.ids import DeviceName
from tests.support.dcmi_stub import StubHost, dcmi_probe

SEPARATE_NPU = 0x8C03A000  # faultCode.json: SeparateNPU -> Critical
WAIT_S = 10.0  # a bound for a slow CI machine, not a latency figure (make bench measures it)


def event(logic: int, code: int, assertion: int, kind: int = DMS_FAULT_EVENT) -> Event:
    made = Event()
    made.type = kind
    made.event_t.dms_event.deviceid = logic
    made.event_t.dms_event.event_id = code
    made.event_t.dms_event.assertion = assertion
    return made


def health(probe: DcmiProbe, name: str) -> Health:
    return next(d.health for d in probe.probe().devices if d.name == name)


def logic_id(host: StubHost, physical: int) -> int:
    return next(c.device.logic_id for c in host.chips if c.device.physical_id == physical)


def deliver(events: FaultEvents, made: Event) -> None:
    events.on_event(ctypes.pointer(made))  # as the library's thread hands it over


def test_raised_codes_are_kept_until_they_recover() -> None:
    events, calls = FaultEvents(), []
    events._listeners.append(lambda: calls.append(1))
    deliver(events, event(3, SEPARATE_NPU, RAISED))
    deliver(events, event(3, 0x80E18402, RAISED))
    assert events.raised(3) == {SEPARATE_NPU, 0x80E18402}
    deliver(events, event(3, SEPARATE_NPU, RECOVERED))
    assert events.raised(3) == {0x80E18402}
    assert events.raised(4) == frozenset()
    assert len(calls) == 3


def test_a_one_off_event_asks_for_a_probe_and_keeps_nothing() -> None:
    events, calls = FaultEvents(), []
    events._listeners.append(lambda: calls.append(1))
    deliver(events, event(2, SEPARATE_NPU, ONE_OFF))
    deliver(events, event(2, SEPARATE_NPU, RAISED, kind=7))  # not a fault event: ignored
    assert events.raised(2) == frozenset()
    assert calls == [1, 1]


def test_raised_codes_per_chip_are_bounded() -> None:
    events = FaultEvents()
    for code in range(MAX_ERROR_CODES + 50):
        deliver(events, event(1, code, RAISED))
    assert len(events.raised(1)) == MAX_ERROR_CODES


def test_a_failing_listener_never_raises_into_the_library(caplog: pytest.LogCaptureFixture) -> None:
    events = FaultEvents()
    events._listeners.append(lambda: 1 / 0)  # type: ignore[func-returns-value]
    deliver(events, event(1, SEPARATE_NPU, RAISED))
    assert "handling a DCMI fault event failed" in caplog.text
    assert events.raised(1) == {SEPARATE_NPU}


def test_an_injected_fault_is_announced_and_recovery_too(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe, announced = dcmi_probe(host), threading.Event()
    assert health(probe, "npu-3") is Health.HEALTHY
    assert probe.subscribe_faults(announced.set)
    host.set_fault(3, health=3, codes=(SEPARATE_NPU,))
    assert announced.wait(WAIT_S), "the stand-in announced no event"
    assert probe._events.raised(logic_id(host, 3)) == {SEPARATE_NPU}
    assert health(probe, "npu-3") is Health.CRITICAL
    announced.clear()
    host.set_fault(3, health=0, codes=())
    assert announced.wait(WAIT_S), "the stand-in announced no recovery"
    assert health(probe, "npu-3") is Health.HEALTHY


def test_an_event_raised_code_counts_when_the_poll_does_not_list_it(tmp_path: Path) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path)
    probe = dcmi_probe(host)
    logic = logic_id(host, 5)
    deliver(probe._events, event(logic, SEPARATE_NPU, RAISED))
    assert health(probe, "npu-5") is Health.CRITICAL
    assert probe.error_codes[DeviceName("npu-5")] == (SEPARATE_NPU,)


def test_unsupported_subscription_leaves_health_polled(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = StubHost.from_scenario("910B4_8npu", tmp_path).variant("no-events", subscribe_rc=-8255)
    probe = dcmi_probe(host)
    with caplog.at_level(logging.WARNING):
        assert not probe.subscribe_faults(lambda: None)
    assert "health is polled" in caplog.text
    assert "-8255" in caplog.text
    host.set_fault(3, health=3, codes=(SEPARATE_NPU,))
    assert health(probe, "npu-3") is Health.CRITICAL  # the poll


def test_a_library_without_the_call_cannot_subscribe() -> None:
    libc = ctypes.CDLL(None)
    assert FaultEvents().subscribe(libc, lambda: None) == (
        "libdcmi.so has no dcmi_subscribe_fault_event"
    )


DROPPED_PROBE = """
import gc, sys, time
from pathlib import Path
from tests.support.dcmi_stub import StubHost, dcmi_probe
host = StubHost.from_scenario("910B4_8npu", Path(sys.argv[1]))
probe = dcmi_probe(host)
assert probe.subscribe_faults(lambda: None)
del probe
gc.collect()
host.set_fault(3, health=3, codes=(0x8C03A000,))
time.sleep(0.5)  # the stand-in's watcher announces within 10 ms
print("survived")
"""


def test_an_event_after_its_probe_is_gone_does_not_crash_the_process(tmp_path: Path) -> None:
    """The library keeps the callback's address for good: it must never be freed."""
    done = subprocess.run(
        [sys.executable, "-c", DROPPED_PROBE, str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False, cwd=Path(__file__).parents[3],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "survived"
