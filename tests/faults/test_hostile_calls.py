"""Hostile calls on the plugin process's DRA socket: names and UIDs that are not names, a known
UID under another identity, calls of thousands of claims, and floods of health streams. Every
answer comes in time, per claim, and changes nothing it should not."""

from __future__ import annotations

import threading
import time
from typing import Any

import grpc

from npu_dra.adapters.grpc.gen.dra_health.v1alpha1 import api_pb2, api_pb2_grpc
from tests.faults.harness import create_claims, fault_node
from tests.support.controlplane import ControlPlane, wait_for
from tests.support.kubelet import WireClaim

FLOOD = 32
HEALTH_STREAMS = 4  # the plugin's bound on open health streams (resource_health_stream.py)
STREAM_TRIES = 40  # the kubelet's tries, one a second


def test_hostile_names_uids_and_sizes_get_per_claim_errors(access: ControlPlane) -> None:
    with fault_node(access, "hostile") as node:
        (owner,) = create_claims(node, [["npu-5"]])
        node.start()
        hostile = [
            WireClaim(node.namespace, "../../etc/passwd", "9d0e3c1a-0000-4000-8000-000000000001"),
            WireClaim(node.namespace, "x" * 300, "9d0e3c1a-0000-4000-8000-000000000002"),
            WireClaim(node.namespace, "fine", "../../../var/run/cdi/evil"),
            WireClaim("Not_A_Namespace", "fine", "9d0e3c1a-0000-4000-8000-000000000003"),
            WireClaim(node.namespace, "fine", "u" * 5000),
        ]
        many = [WireClaim(node.namespace, f"c-{i}", f"bad/uid/{i}") for i in range(5000)]
        with node.kubelet() as kubelet:
            granted = kubelet.prepare([owner], timeout=30).claims[owner.uid]
            answers = kubelet.prepare(hostile, timeout=30).claims
            bulk = kubelet.prepare(many, timeout=30).claims
            impostor = WireClaim(node.namespace, "impostor", owner.uid)
            stolen = kubelet.prepare([impostor], timeout=30).claims[owner.uid]
            removed = kubelet.unprepare([impostor], timeout=30).claims[owner.uid]
            again = kubelet.prepare([owner], timeout=30).claims[owner.uid]
        specs = node.spec_uids()

    assert [d.device_name for d in granted.devices] == ["npu-5"]
    assert set(answers) == {c.uid[:5000] for c in hostile}
    assert all(a.error for a in answers.values())
    assert all(len(a.error) < 400 for a in answers.values())
    assert len(bulk) == len(many)
    assert all("invalid claim reference" in a.error for a in bulk.values())
    assert stolen.devices == []
    assert f"is prepared for {node.namespace}/claim-0" in stolen.error
    assert f"is prepared for {node.namespace}/claim-0" in removed.error
    assert again == granted
    assert specs == {owner.uid}


def test_a_flood_of_health_streams_never_starves_prepare(access: ControlPlane) -> None:
    with fault_node(access, "flood") as node:
        (claim,) = create_claims(node, [["npu-6"]])
        node.start()
        with node.kubelet() as kubelet:
            socket = kubelet.endpoint
            channels = [grpc.insecure_channel(f"unix:{socket}") for _ in range(FLOOD)]
            streams = [
                api_pb2_grpc.DRAResourceHealthStub(c).NodeWatchResources(
                    api_pb2.NodeWatchResourcesRequest(), timeout=120
                )
                for c in channels
            ]
            try:
                answer = kubelet.prepare([claim], timeout=30).claims[claim.uid]
                gone = kubelet.unprepare([claim], timeout=30).claims[claim.uid]
            finally:
                for stream, channel in zip(streams, channels, strict=True):
                    stream.cancel()
                    channel.close()

    assert [d.device_name for d in answer.devices] == ["npu-6"]
    assert gone.error == ""


def test_one_uid_under_two_identities_in_one_call_is_refused_and_changes_nothing(
    access: ControlPlane,
) -> None:
    with fault_node(access, "twice") as node:
        (owner,) = create_claims(node, [["npu-3"]])
        twice = [owner, WireClaim(owner.namespace, "../x", owner.uid)]
        node.start()
        with node.kubelet() as kubelet:
            refused = kubelet.prepare(twice, timeout=30).claims
            specs_after_refusal = node.spec_uids()
            granted = kubelet.prepare([owner], timeout=30).claims[owner.uid]
            kept = kubelet.unprepare(twice, timeout=30).claims
            specs_after_unprepare = node.spec_uids()

    assert set(refused) == {owner.uid}
    assert refused[owner.uid].devices == []
    assert "more than once" in refused[owner.uid].error
    assert specs_after_refusal == set()
    assert [d.device_name for d in granted.devices] == ["npu-3"]
    assert "more than once" in kept[owner.uid].error
    assert specs_after_unprepare == {owner.uid}


def test_a_client_holding_every_health_stream_slot_cannot_keep_the_kubelets_stream_out(
    access: ControlPlane,
) -> None:
    with fault_node(access, "slots") as node:
        node.start()
        with node.kubelet() as kubelet:
            socket = kubelet.endpoint
            held = [health_stream(socket) for _ in range(HEALTH_STREAMS)]
            try:
                firsts = [next(stream) for _, stream in held]
                ends = stream_ends([stream for _, stream in held])
                refused, first = kubelets_stream(socket)
                if first is not None:  # the stream it displaced ends at once
                    wait_for(lambda: ends, timeout=10, what="a held stream to end")
                ended = list(ends)
            finally:
                for channel, stream in held:
                    stream.cancel()
                    channel.close()

    assert all(len(f.devices) == 8 for f in firsts)
    assert refused  # the bound still holds against young streams
    assert set(refused) == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert first is not None
    assert len(first.devices) == 8
    assert ended == [grpc.StatusCode.CANCELLED]  # the one open longest made room


def stream_ends(streams: list[Any]) -> list[grpc.StatusCode]:
    """Reads each stream to its end in the background (a client learns a stream ended only
    once it has read what came before): the codes they ended with, as they end."""
    ends: list[grpc.StatusCode] = []

    def drain(stream: Any) -> None:
        try:
            for _ in stream:
                pass
        except grpc.RpcError as error:
            ends.append(error.code())

    for stream in streams:
        threading.Thread(target=drain, args=(stream,), daemon=True).start()
    return ends


def health_stream(socket: str) -> tuple[grpc.Channel, Any]:
    channel = grpc.insecure_channel(f"unix:{socket}")
    stub = api_pb2_grpc.DRAResourceHealthStub(channel)
    return channel, stub.NodeWatchResources(api_pb2.NodeWatchResourcesRequest(), timeout=300)


def kubelets_stream(socket: str) -> tuple[list[grpc.StatusCode], Any]:
    """Opens the health stream as the kubelet does, again after each refusal (the kubelet
    v1.34.3 retries every 5 s: wait.UntilWithContext in pkg/kubelet/cm/dra/plugin/
    dra_plugin_manager.go; here every second), a bounded number of times: the refusals' codes,
    and its first message (None if it never got one)."""
    refused: list[grpc.StatusCode] = []
    for _ in range(STREAM_TRIES):
        channel, stream = health_stream(socket)
        try:
            return refused, next(stream)
        except grpc.RpcError as error:
            refused.append(error.code())
        finally:
            stream.cancel()
            channel.close()
        time.sleep(1.0)
    return refused, None
