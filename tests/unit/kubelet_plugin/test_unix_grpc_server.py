"""Unix-socket gRPC servers: stale files go before bind, our file goes on stop, a deleted socket
is listened on again."""

from __future__ import annotations

import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from npu_dra.adapters.grpc.sockets import (
    UnixGrpcServer,
    check_socket_path,
    remove_stale,
    unix_target,
)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def nothing(_: Any) -> None:
    """No services: these tests are about the socket file."""


def is_socket(path: Path) -> bool:
    return path.exists() and stat.S_ISSOCK(path.lstat().st_mode)


def test_start_creates_parent_dirs_and_a_socket(short_dir: Path) -> None:
    server = UnixGrpcServer(short_dir / "a" / "b" / "x.sock", nothing)
    server.start()
    try:
        assert is_socket(server.path)
    finally:
        server.stop()


def test_stop_removes_the_socket_file(short_dir: Path) -> None:
    server = UnixGrpcServer(short_dir / "x.sock", nothing)
    server.start()

    server.stop()

    assert not server.path.exists()


def test_a_stale_regular_file_and_a_dead_socket_are_replaced(short_dir: Path) -> None:
    stale_file = short_dir / "file.sock"
    stale_file.write_text("crash leftovers")
    dead = short_dir / "dead.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(dead))
    servers = [UnixGrpcServer(p, nothing) for p in (stale_file, dead)]

    for server in servers:
        server.start()
    try:
        assert all(is_socket(s.path) for s in servers)
    finally:
        for server in servers:
            server.stop()


def test_a_directory_in_the_way_is_an_error(short_dir: Path) -> None:
    (short_dir / "dir.sock").mkdir()

    with pytest.raises(OSError, match="is a directory"):
        remove_stale(short_dir / "dir.sock")


def test_a_path_too_long_for_a_unix_socket_is_an_error(short_dir: Path) -> None:
    with pytest.raises(OSError, match="longer than 107 bytes"):
        check_socket_path(short_dir / ("x" * 120))


def test_a_deleted_socket_is_listened_on_again(short_dir: Path) -> None:
    server = UnixGrpcServer(short_dir / "x.sock", nothing)
    server.start()
    try:
        server.path.unlink()

        rebuilt = server.ensure_listening()

        assert rebuilt
        assert is_socket(server.path)
        assert not server.ensure_listening()
    finally:
        server.stop()


def test_a_stopped_server_is_not_restarted(short_dir: Path) -> None:
    server = UnixGrpcServer(short_dir / "x.sock", nothing)
    server.start()
    server.stop()

    assert not server.ensure_listening()
    assert not server.path.exists()


def test_one_server_on_two_sockets_serves_both_and_relistens_on_both(short_dir: Path) -> None:
    def echo(server: Any) -> None:
        handler = grpc.unary_unary_rpc_method_handler(lambda request, _context: request)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("t.Echo", {"Say": handler}),)
        )

    first, second = short_dir / "dra.sock", short_dir / "reg" / "reg.sock"
    server = UnixGrpcServer(first, echo, more_paths=(second,))
    server.start()
    try:
        for path in (first, second):
            with grpc.insecure_channel(unix_target(path)) as channel:
                assert channel.unary_unary("/t.Echo/Say")(b"hi", timeout=5) == b"hi"
        second.unlink()
        assert server.gone()

        assert server.ensure_listening()
        assert is_socket(first)
        assert is_socket(second)
        assert not server.gone()
    finally:
        server.stop()
    assert not first.exists()
    assert not second.exists()
