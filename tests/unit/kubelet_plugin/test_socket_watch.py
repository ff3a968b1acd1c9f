"""The socket watch sleeps until a socket's directory changes (inotify), or falls back to
polling where it cannot watch."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_dra.adapters.grpc import socket_watch
from npu_dra.adapters.grpc.socket_watch import SocketWatch


@pytest.fixture
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="npd-w-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def waiting(watch: SocketWatch, timeout: float) -> tuple[threading.Thread, list[bool]]:
    woke: list[bool] = []
    thread = threading.Thread(target=lambda: woke.append(watch.wait(timeout)))
    thread.start()
    time.sleep(0.2)  # the thread is asleep in select by now
    return thread, woke


def test_a_deleted_socket_file_wakes_the_waiter_at_once(scratch: Path) -> None:
    sock = scratch / "reg" / "x.sock"
    sock.parent.mkdir()
    sock.write_text("")
    watch = SocketWatch([sock, scratch / "dra.sock"])
    try:
        assert watch.uses_inotify
        assert watch.wait(0.05) is False  # nothing changed: the timeout passes
        thread, woke = waiting(watch, 30)
        sock.unlink()
        thread.join(5)
        assert woke == [True]
    finally:
        watch.release()


def test_close_wakes_the_waiter_and_later_waits_return_at_once(scratch: Path) -> None:
    watch = SocketWatch([scratch / "x.sock"])
    thread, woke = waiting(watch, 30)
    watch.close()
    thread.join(5)
    assert woke == [False]
    started = time.monotonic()
    assert watch.wait(30) is False
    assert time.monotonic() - started < 5
    watch.release()


def test_a_directory_that_does_not_exist_yet_is_polled_then_watched(scratch: Path) -> None:
    later = scratch / "later"
    watch = SocketWatch([later / "x.sock"], poll_s=0.05)
    try:
        assert watch.wait(30) is False  # polled: returns after poll_s, not 30 s
        later.mkdir()
        assert watch.wait(0.05) is False  # watched now, nothing changed yet
        thread, woke = waiting(watch, 30)
        (later / "x.sock").write_text("")
        thread.join(5)
        assert woke == [True]
    finally:
        watch.release()


def test_without_inotify_it_polls(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket_watch, "_libc", lambda: None)
    watch = SocketWatch([scratch / "x.sock"], poll_s=0.05)
    try:
        assert not watch.uses_inotify
        started = time.monotonic()
        assert watch.wait(30) is False
        assert time.monotonic() - started < 5
    finally:
        watch.release()
