"""The in-process plugin on real sockets under faults: an API outage at start, floods of
health streams, a permissive umask, and temp files a crash left behind.

(The same faults against a real API server, through a toxic proxy and with kill -9, are in
tests/faults.)
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
from plugin_node import DRIVER, NODE, Node, plugin_settings, start_node

from npu_dra.adapters.cluster.memory import MemoryCluster
from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2, api_pb2_grpc
from npu_dra.domain.claims import ClaimRef, ResourceClaim
from npu_dra.domain.errors import ClusterUnavailable
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.pool import ResourceSlice

FLOOD = 24


class OutageCluster:
    """A MemoryCluster behind a switch: while `down`, every call fails as an unreachable API
    server's would (after the adapter's retries)."""

    def __init__(self, memory: MemoryCluster) -> None:
        self.memory = memory
        self.down = True
        self.publishes = 0

    def _check(self) -> None:
        if self.down:
            raise ClusterUnavailable("https://10.0.0.1:443: connection refused")

    def publish_pool(
        self, *, node: NodeName, driver: DriverName, slices: Sequence[ResourceSlice]
    ) -> tuple[ResourceSlice, ...]:
        self._check()
        self.publishes += 1
        return self.memory.publish_pool(node=node, driver=driver, slices=slices)

    def get_claim(self, *, ref: ClaimRef) -> ResourceClaim:
        self._check()
        return self.memory.get_claim(ref=ref)

    def watch_slices(self, **kwargs: Any) -> Any:
        return self.memory.watch_slices(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.memory, name)


def wait_until(probe: Callable[[], bool], timeout: float = 10.0) -> bool:
    done = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if probe():
            return True
        done.wait(0.05)
    return probe()


def test_a_plugin_restarted_during_an_api_outage_serves_checkpointed_claims(node: Node) -> None:
    ready = node.claim("ready", ["npu-0"])
    gone = node.claim("gone", ["npu-1"])
    with node.kubelet.register() as dra:
        before = dra.prepare([ready, gone])
    node.plugin.stop()
    outage = OutageCluster(node.cluster)
    fresh = node.claim("fresh", ["npu-2"])

    restarted = start_node(node.settings, cluster=outage)  # type: ignore[arg-type]
    try:
        with restarted.kubelet.register() as dra:
            again = dra.prepare([ready])
            unprepared = dra.unprepare([gone])
            refused = dra.prepare([fresh])
        published_while_down = outage.publishes
        outage.down = False
        published = wait_until(lambda: outage.publishes > 0)
    finally:
        restarted.plugin.stop()

    assert again.claims[ready.uid] == before.claims[ready.uid]
    assert unprepared.claims[gone.uid].error == ""
    assert not node.cdi_spec(gone).exists()
    assert "connection refused" in refused.claims[fresh.uid].error
    assert published_while_down == 0
    assert published
    assert len(node.cluster.list_slices(node=NodeName(NODE))) == 1


def health_stream(channel: grpc.Channel) -> Any:
    stub = api_pb2_grpc.DRAResourceHealthStub(channel)
    return stub.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), timeout=60)


def first_refusal(stream: Any) -> grpc.StatusCode | None:
    """None if the stream's first message came, else the status it was refused with."""
    try:
        next(stream)
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return None


@contextlib.contextmanager
def open_streams(socket: Path, count: int, start: Callable[[grpc.Channel], Any]) -> Iterator[int]:
    """`count` long-lived streams, each on its own connection; yields how many the server
    accepted (the rest it refused), and cancels them all on exit."""
    channels = [grpc.insecure_channel(f"unix:{socket}") for _ in range(count)]
    streams = [start(channel) for channel in channels]
    try:
        refusals = [first_refusal(stream) for stream in streams]
        assert set(refusals) <= {None, grpc.StatusCode.RESOURCE_EXHAUSTED}
        yield refusals.count(None)
    finally:
        for stream, channel in zip(streams, channels, strict=True):
            stream.cancel()
            channel.close()


def test_a_flood_of_health_streams_never_starves_prepare(node: Node) -> None:
    ref = node.claim("during-flood", ["npu-3"])
    with node.kubelet.register() as dra, open_streams(node.dra_socket, FLOOD, health_stream) as n:
        answer = dra.prepare([ref], timeout=10)
        again = dra.unprepare([ref], timeout=10)

    assert [d.device_name for d in answer.claims[ref.uid].devices] == ["npu-3"]
    assert again.claims[ref.uid].error == ""
    assert 1 <= n < FLOOD


def test_a_closed_health_stream_frees_its_slot_for_the_kubelet(node: Node) -> None:
    with open_streams(node.dra_socket, FLOOD, health_stream):
        pass
    with open_streams(node.dra_socket, 1, health_stream) as accepted:
        assert accepted == 1


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@contextlib.contextmanager
def umask(value: int) -> Iterator[None]:
    previous = os.umask(value)
    try:
        yield
    finally:
        os.umask(previous)


def test_sockets_data_dir_and_checkpoint_are_private_under_umask_000(scratch: Path) -> None:
    with umask(0):
        started = start_node(plugin_settings(scratch))
        try:
            ref = started.claim("private", ["npu-0"])
            with started.kubelet.register() as dra:
                dra.prepare([ref])
            modes = {
                "dra socket": mode(started.dra_socket),
                "registration socket": mode(started.registration_socket),
                "data dir": mode(started.dra_socket.parent),
                "checkpoint": mode(started.checkpoint_file),
                "cdi spec": mode(started.cdi_spec(ref)),
            }
        finally:
            started.plugin.stop()

    assert modes == {
        "dra socket": 0o600,
        "registration socket": 0o600,
        "data dir": 0o700,
        "checkpoint": 0o600,
        "cdi spec": 0o644,
    }


def test_an_existing_world_open_data_dir_is_made_private(scratch: Path) -> None:
    settings = plugin_settings(scratch)
    data_dir = settings.plugins_dir / DRIVER
    data_dir.mkdir(parents=True)
    data_dir.chmod(0o777)
    started = start_node(settings)
    started.plugin.stop()
    assert mode(data_dir) == 0o700


def test_temp_files_a_crash_left_are_removed_at_start(node: Node) -> None:
    ref = node.claim("kept", ["npu-4"])
    with node.kubelet.register() as dra:
        dra.prepare([ref])
    node.plugin.stop()
    cdi, data = node.settings.cdi_root, node.checkpoint_file.parent
    ours = [
        cdi / f".k8s.{DRIVER}-npu_abc123.tmp",
        data / ".checkpoint.json.k1l2m3.tmp",
    ]
    legacy = cdi / "spec.x9y8z7.tmp"
    fresh_foreign = cdi / "spec.othervendor.tmp"  # another driver's write in progress
    for path in (*ours, legacy, fresh_foreign):
        path.write_text("half written")
    os.utime(legacy, (1_000_000_000, 1_000_000_000))

    restarted = start_node(node.settings, cluster=node.cluster)
    restarted.plugin.stop()

    assert [p.name for p in (*ours, legacy) if p.exists()] == []
    assert fresh_foreign.exists()
    assert node.cdi_spec(ref).exists()
