"""Restarts of the plugin and of the kubelet: state survives, damage stops the start loudly,
and the kubelet can always find us again."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from plugin_node import DRIVER, Node, plugin_settings, start_node

from npu_dra.adapters.checkpoint import FileCheckpointStore
from npu_dra.app.commands import kubelet_plugin_runtime as runtime
from npu_dra.app.commands.kubelet_plugin_runtime import StartupError
from tests.support.kubelet import Kubelet, get_info


def _restart(node: Node) -> Node:
    node.plugin.stop()
    return start_node(node.settings, cluster=node.cluster)


def test_stop_removes_both_sockets(node: Node) -> None:
    node.plugin.stop()

    assert not node.registration_socket.exists()
    assert not node.dra_socket.exists()


def test_a_restarted_plugin_registers_again_and_remembers_prepared_claims(node: Node) -> None:
    ref = node.claim("kept", ["npu-3"])
    with node.kubelet.register() as dra:
        before = dra.prepare([ref])

    restarted = _restart(node)
    try:
        with restarted.kubelet.register() as dra:
            again = dra.prepare([ref])
            restarted.cluster.delete("ResourceClaim", ref.name, ref.namespace)
            gone = dra.unprepare([ref]).claims[ref.uid]
    finally:
        restarted.plugin.stop()

    assert again == before
    assert gone.error == ""
    assert not node.cdi_spec(ref).exists()


def test_cdi_specs_lost_while_down_are_recreated_before_serving(node: Node) -> None:
    ref = node.claim("tmpfs", ["npu-2"])
    with node.kubelet.register() as dra:
        dra.prepare([ref])
    written = node.cdi_spec(ref).read_text()
    node.plugin.stop()
    node.cdi_spec(ref).unlink()

    restarted = start_node(node.settings, cluster=node.cluster)
    restarted.plugin.stop()

    assert node.cdi_spec(ref).read_text() == written


def test_damaged_and_orphan_cdi_specs_are_repaired_at_start(node: Node) -> None:
    ref = node.claim("damaged", ["npu-1"])
    with node.kubelet.register() as dra:
        dra.prepare([ref])
    written = node.cdi_spec(ref).read_text()
    node.plugin.stop()
    node.cdi_spec(ref).write_text("{not json")
    orphan = node.settings.cdi_root / f"k8s.{DRIVER}-npu_0a0b0c0d-dead-4bee-8f00-000000000000.json"
    orphan.write_text("{}")
    foreign = node.settings.cdi_root / "vendor.example-gpu.json"
    foreign.write_text("{not ours")

    restarted = start_node(node.settings, cluster=node.cluster)
    restarted.plugin.stop()

    assert node.cdi_spec(ref).read_text() == written
    assert not orphan.exists()
    assert foreign.read_text() == "{not ours"


@pytest.mark.parametrize(
    "damage",
    [
        b"{not json",
        b"",
        b'{"apiVersion": "npu-dra.checkpoint/v1", "checksum": "sha256:00", "claims": {}}',
    ],
    ids=["not json", "empty", "bad checksum"],
)
def test_a_malformed_checkpoint_stops_the_start_naming_the_file(
    scratch: Path, damage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    settings = plugin_settings(scratch)
    checkpoint = settings.plugins_dir / DRIVER / "checkpoint.json"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(damage)

    with caplog.at_level(logging.ERROR):
        code = runtime.run(settings, threading.Event())

    assert code == 1
    assert str(checkpoint) in caplog.text
    assert "nothing was overwritten" in caplog.text
    assert checkpoint.read_bytes() == damage
    assert not settings.registrar_dir.exists()


def test_a_malformed_checkpoint_is_a_startup_error_before_any_socket(scratch: Path) -> None:
    settings = plugin_settings(scratch)
    checkpoint = settings.plugins_dir / DRIVER / "checkpoint.json"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_text("[]")

    with pytest.raises(StartupError, match=r"checkpoint\.json"):
        start_node(settings)

    assert not (settings.plugins_dir / DRIVER / "dra.sock").exists()
    assert not settings.registrar_dir.exists()


def test_stale_files_at_both_socket_paths_are_replaced(scratch: Path) -> None:
    settings = plugin_settings(scratch)
    stale_registration = settings.registrar_dir / f"{DRIVER}-reg.sock"
    stale_dra = settings.plugins_dir / DRIVER / "dra.sock"
    for stale in (stale_registration, stale_dra):
        stale.parent.mkdir(parents=True, exist_ok=True)
        stale.write_text("left over by a crash")

    started = start_node(settings)
    try:
        with started.kubelet.register() as dra:
            assert dra.prepare([]).claims == {}
    finally:
        started.plugin.stop()


def test_a_deleted_registration_socket_is_recreated(node: Node) -> None:
    node.registration_socket.unlink()

    node.plugin.relisten()

    assert get_info(node.registration_socket).name == DRIVER


def test_the_serve_loop_notices_a_deleted_socket(node: Node) -> None:
    stop = threading.Event()
    loop = threading.Thread(target=node.plugin.serve, args=(stop,))
    loop.start()
    try:
        node.registration_socket.unlink()
        deadline = time.monotonic() + 10
        while not node.registration_socket.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert get_info(node.registration_socket).name == DRIVER
    finally:
        stop.set()
        loop.join()


def test_a_restarted_kubelet_registers_the_running_plugin_again(node: Node) -> None:
    ref = node.claim("survivor", ["npu-0"])
    with node.kubelet.register() as old:
        old.prepare([ref])
        with Kubelet(node.settings.registrar_dir).register() as new:
            answer = new.prepare([ref]).claims[ref.uid]
            assert old.unprepare([ref]).claims[ref.uid].error == ""

    assert [d.device_name for d in answer.devices] == ["npu-0"]
    assert FileCheckpointStore(node.checkpoint_file).load().claims == {}


def test_huaweis_driver_checkpoint_stops_the_start_naming_that_driver(
    scratch: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Huawei's driver (same name, same data directory, same file name) left its checkpoint:
    the start says whose it is and what to do, and leaves it as it is."""
    settings = plugin_settings(scratch)
    checkpoint = settings.plugins_dir / DRIVER / "checkpoint.json"
    checkpoint.parent.mkdir(parents=True)
    theirs = b'{"checksum":1234,"v1":{"preparedClaims":{"uid-1":{"status":{}}}}}'
    checkpoint.write_bytes(theirs)

    with caplog.at_level(logging.ERROR):
        code = runtime.run(settings, threading.Event())

    assert code == 1
    assert "Huawei's own Ascend DRA driver" in caplog.text
    assert "1 prepared claim(s)" in caplog.text
    assert "docs/migrating-from-huawei-dra.md" in caplog.text
    assert checkpoint.read_bytes() == theirs
    assert not settings.registrar_dir.exists()
