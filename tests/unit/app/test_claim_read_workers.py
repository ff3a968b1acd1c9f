"""The claim-read workers: kept between calls, never making a call wait on a stuck read, and
gone once idle."""

import threading
import time

from npu_dra.app.services.claim_fetch import ReadWorkers


def run_and_wait(workers: ReadWorkers) -> threading.Thread:
    ran: list[threading.Thread] = []
    done = threading.Event()

    def task() -> None:
        ran.append(threading.current_thread())
        done.set()

    workers.submit(task)
    assert done.wait(timeout=10)
    return ran[0]


def wait_until(condition: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.01)
    return False


def test_calls_one_after_another_reuse_one_worker() -> None:
    workers = ReadWorkers()
    threads = {run_and_wait(workers) for _ in range(20)}
    assert len(threads) == 1
    assert workers.threads == 1


def test_a_stuck_read_does_not_hold_up_the_next_task() -> None:
    workers = ReadWorkers()
    release = threading.Event()
    workers.submit(lambda: release.wait(timeout=30))
    try:
        assert wait_until(lambda: workers.threads == 1)
        run_and_wait(workers)  # within the timeout: another worker took it
        assert workers.threads == 2
    finally:
        release.set()


def test_past_the_cap_tasks_queue_for_a_busy_worker() -> None:
    workers = ReadWorkers(max_threads=1)
    release = threading.Event()
    workers.submit(lambda: release.wait(timeout=30))
    ran = threading.Event()
    workers.submit(ran.set)
    assert not ran.wait(timeout=0.2)
    release.set()
    assert ran.wait(timeout=10)
    assert workers.threads == 1


def test_idle_workers_end() -> None:
    workers = ReadWorkers(idle_exit_s=0.1)
    thread = run_and_wait(workers)
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert workers.threads == 0
    run_and_wait(workers)  # and a later task starts one again


def test_after_a_burst_one_worker_serves_and_the_extra_ones_end() -> None:
    workers = ReadWorkers(idle_exit_s=0.3)
    release = threading.Event()
    started = threading.Semaphore(0)

    def held() -> None:
        started.release()
        release.wait(timeout=30)

    for _ in range(4):
        workers.submit(held)
    for _ in range(4):
        assert started.acquire(timeout=10)
    assert workers.threads == 4
    release.set()
    assert wait_until(lambda: workers.threads == 4)
    time.sleep(0.05)  # all four idle again
    serving = set()
    deadline = time.monotonic() + 1.0  # calls one after another, for longer than idle_exit_s
    while time.monotonic() < deadline:
        serving.add(run_and_wait(workers))
        time.sleep(0.01)
    assert len(serving) == 1
    assert wait_until(lambda: workers.threads == 1)
