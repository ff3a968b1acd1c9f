"""Sockets of plugin instances that died are removed by a starting instance; live ones, young
ones, our own, other drivers' and files that are not sockets are left alone."""

import os
import socket
import time
from pathlib import Path

import pytest

from npu_dra.adapters.grpc import dead_sockets
from npu_dra.adapters.grpc.dead_sockets import remove_dead_sockets

PATTERNS = ["npu.huawei.com-*-reg.sock", "npu.huawei.com-reg.sock"]


def bound(path: Path, *, listening: bool) -> socket.socket:
    made = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    made.bind(str(path))
    if listening:
        made.listen(1)
    return made


def aged(path: Path) -> None:
    old = time.time() - 60
    os.utime(path, (old, old), follow_symlinks=False)


def test_only_dead_old_sockets_of_this_driver_go(tmp_path: Path) -> None:
    live = bound(tmp_path / "npu.huawei.com-live-reg.sock", listening=True)
    dead = bound(tmp_path / "npu.huawei.com-dead-reg.sock", listening=False)
    dead.close()  # the file stays: what SIGKILL leaves
    old_name = bound(tmp_path / "npu.huawei.com-reg.sock", listening=False)
    old_name.close()
    other = bound(tmp_path / "gpu.npu-dra.io-dead-reg.sock", listening=False)
    other.close()
    own = bound(tmp_path / "npu.huawei.com-mine-reg.sock", listening=False)
    own.close()
    (tmp_path / "npu.huawei.com-file-reg.sock").write_text("not a socket")
    for path in tmp_path.iterdir():
        aged(path)
    try:
        removed = remove_dead_sockets(
            tmp_path, PATTERNS, keep=[tmp_path / "npu.huawei.com-mine-reg.sock"]
        )
    finally:
        live.close()
    assert sorted(p.name for p in removed) == [
        "npu.huawei.com-dead-reg.sock",
        "npu.huawei.com-reg.sock",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "gpu.npu-dra.io-dead-reg.sock",
        "npu.huawei.com-file-reg.sock",
        "npu.huawei.com-live-reg.sock",
        "npu.huawei.com-mine-reg.sock",
    ]


def test_a_young_dead_socket_is_left_for_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound(tmp_path / "npu.huawei.com-new-reg.sock", listening=False).close()
    assert remove_dead_sockets(tmp_path, PATTERNS, keep=[]) == []
    monkeypatch.setattr(dead_sockets, "MIN_AGE_S", 0.0)
    assert len(remove_dead_sockets(tmp_path, PATTERNS, keep=[])) == 1


def test_a_missing_directory_removes_nothing(tmp_path: Path) -> None:
    assert remove_dead_sockets(tmp_path / "absent", PATTERNS, keep=[]) == []
