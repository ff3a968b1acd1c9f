"""A new kubelet.sock is noticed even when deleted and recreated between two polls."""

import socket
from pathlib import Path

from npu_dra.adapters.grpc.device_plugin.watcher import KubeletSocketWatcher


def bind(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


def test_a_recreated_socket_is_reported_once(tmp_path: Path) -> None:
    path = tmp_path / "kubelet.sock"
    first = bind(path)
    watcher = KubeletSocketWatcher(path)
    assert watcher.exists()
    assert not watcher.recreated()
    first.close()
    path.unlink()
    second = bind(path)  # between two polls
    try:
        assert watcher.recreated()
        assert not watcher.recreated()
    finally:
        second.close()


def test_a_socket_appearing_later_counts_as_new(tmp_path: Path) -> None:
    path = tmp_path / "kubelet.sock"
    watcher = KubeletSocketWatcher(path)
    assert not watcher.exists()
    assert not watcher.recreated()
    sock = bind(path)
    try:
        assert watcher.recreated()
    finally:
        sock.close()
