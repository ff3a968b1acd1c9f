"""DCMI fault events on a real API server (v1.37.2: device taints GA): with the health
re-probe an hour away, a fault the stand-in libdcmi.so announces still taints the NPU, and its
recovery removes the taint; where the library cannot subscribe, the plugin says so and polls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.dcmi_node import DRIVER, SEPARATE_NPU, DcmiNode, dcmi_node
from tests.support.controlplane import wait_for
from tests.support.k8s_fixtures import V137, plane_for

pytestmark = pytest.mark.k8s_version(V137)
NO_EXECUTE = {"key": f"{DRIVER}/health", "value": "Critical", "effect": "NoExecute"}


@pytest.fixture(scope="module")
def subscribed(request: pytest.FixtureRequest) -> Iterator[DcmiNode]:
    with dcmi_node(plane_for(request, V137)) as node:
        yield node


def wait(node: DcmiNode, check: object, what: str) -> None:
    try:
        wait_for(check, timeout=60, what=what)  # type: ignore[arg-type]
    except TimeoutError as error:
        raise AssertionError(f"{error}\n--- plugin log:\n{node.plugin.tail()}") from None


def test_an_announced_fault_taints_the_npu_without_a_health_re_probe(
    subscribed: DcmiNode,
) -> None:
    assert "DCMI fault events subscribed" in subscribed.plugin.tail(200)
    subscribed.host.set_fault(2, health=3, codes=(SEPARATE_NPU,))
    try:
        wait(subscribed, lambda: subscribed.taints("npu-2"), "npu-2 tainted")
        [taint] = subscribed.taints("npu-2")
        assert {k: taint[k] for k in NO_EXECUTE} == NO_EXECUTE
        assert all(not subscribed.taints(f"npu-{i}") for i in range(8) if i != 2)
    finally:
        subscribed.host.set_fault(2, health=0, codes=())
    wait(subscribed, lambda: not subscribed.taints("npu-2"), "npu-2's taint removed")


def test_without_subscription_the_plugin_says_it_polls(request: pytest.FixtureRequest) -> None:
    with dcmi_node(plane_for(request, V137), subscribe=False) as node:
        wait(node, lambda: "health is polled" in node.plugin.tail(200), "the polling warning")
        assert "-8255" in node.plugin.tail(200)
