"""Two pods share one NPU on a real v1.37.2 node (consumable capacity, KEP-5075, on by default
there), the real kube-scheduler deciding: `--shared-chips=npu-0` publishes npu-0 once with
`allowMultipleAllocations` and a `memCapacity` request policy; two claims asking half its memory
each both run on it and see its /dev/davinci node and their share in the env; a third that does
not fit the remainder stays pending with the scheduler's reason; a claim asking no capacity (a
whole chip) never lands on npu-0 while it is shared out; deleting one sharer unprepares only it,
and the pending pod then gets the freed half.

Driver configuration on the same node: the NpuConfig admission policy refuses a config that does
not decode when the claim template is created; created anyway (the policy's binding away), it
fails its claim's prepare with a `PrepareFailed` Warning Event naming the field, as does a valid
NpuConfig asking `Exclusive` of a claim allocated a share.

The plugin runs on the host over the Python fake npu-smi (910B4: a family with a
container-sharing mode, which it records), so the pods see the chip by its device node and
env, not by running npu-smi (the spec mounts the plugin's npu-smi: here a Python launcher)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from npu_dra.domain.quantity import Quantity
from tests.e2e.real_node.cluster import RealCluster
from tests.e2e.real_node.sharing_pods import (
    CHIP_ZERO,
    SHARE_CLASS,
    claim_events,
    claimed_device,
    container_env,
    npu_config,
    pod,
    remove,
    template,
    unschedulable,
)
from tests.support.controlplane import ControlPlaneError, wait_for
from tests.support.fake_npu_smi import FakeNpuSmi

CONFIG_POLICY = Path(__file__).resolve().parents[3] / "deploy/manifests/37-npuconfig-policy.yaml"
POLICY = "ascend-npu-dra-kubeletplugin-npuconfig"
SHARED = "npu-0"
GIB = 2**30
SHARERS = ("share-a", "share-b")
LATE, WHOLE = "share-late", "whole-chip"


def share_memory(cluster: RealCluster) -> int:
    """Half the shared chip's memory in whole GiB: two such shares fit, a third does not."""
    published = wait_for(
        lambda: (
            cluster.published().get(SHARED, {}).get("allowMultipleAllocations")
            and cluster.published()[SHARED]
        ),
        timeout=60,
        what=f"{SHARED} published for several claims",
    )
    memory = Quantity.parse(published["capacity"]["memCapacity"]["value"])
    assert published["capacity"]["memCapacity"]["requestPolicy"]["default"]
    return int(memory.value) // GIB // 2


@pytest.fixture
def sharing_plugin(real_cluster_v137: RealCluster, tmp_path: Path) -> Any:
    cluster = real_cluster_v137
    smi = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "smi")
    argv = [a for a in cluster.dra_argv() if not a.startswith("--npu-smi=")]
    argv += [f"--npu-smi={smi.path}", f"--shared-chips={SHARED}"]
    plugin = cluster.start_plugin("dra-plugin-sharing", argv)
    cluster.wait_registered(plugin)
    yield cluster, smi, plugin
    plugin.stop()


@pytest.mark.timeout(600)
def test_two_pods_share_a_chip_a_third_waits_and_whole_chips_stay_apart(
    sharing_plugin: Any,
) -> None:
    cluster, smi, plugin = sharing_plugin
    pods = (*SHARERS, LATE, WHOLE)
    try:
        half = share_memory(cluster)
        cluster.apply(
            template("npu-share", memory=f"{half}Gi", selector=CHIP_ZERO, device_class=SHARE_CLASS)
        )
        cluster.apply(template("npu-whole", memory=None, selector="true"))
        for name in SHARERS:
            cluster.apply(pod(name, "npu-share"))
        for name in SHARERS:
            cluster.wait_running(name)
        assert {claimed_device(cluster, n) for n in SHARERS} == {SHARED}
        assert len(smi.device_share_on()) == 1, smi.device_share_on()  # npu-0's chip alone
        for name in SHARERS:
            env = container_env(cluster, name)
            assert env["NPU_DRA_DEVICE_0_SHARING"] == "Shared"
            assert env["NPU_DRA_DEVICE_0_MEMORY_MIB"] == str(half * 1024)
            assert "davinci0" in cluster.in_container(name, "ls", "/dev")

        cluster.apply(pod(LATE, "npu-share"))
        cluster.apply(pod(WHOLE, "npu-whole"))
        message = wait_for(
            lambda: unschedulable(cluster, LATE), timeout=60, what=f"{LATE} unschedulable"
        )
        assert "cannot allocate all claims" in message, message
        cluster.wait_running(WHOLE)
        assert claimed_device(cluster, WHOLE) != SHARED
        assert len(smi.device_share_on()) == 1  # a whole chip is not put in sharing mode

        kept = cluster.claim_uids(SHARERS[1])
        started = cluster.read_pod(SHARERS[1])["status"]["containerStatuses"][0]["containerID"]
        cluster.delete_pod(SHARERS[0])
        assert set(kept) <= cluster.checkpointed_uids()
        assert set(kept) <= cluster.cdi_spec_uids()
        after = cluster.read_pod(SHARERS[1])["status"]["containerStatuses"][0]
        assert (after["containerID"], after["restartCount"]) == (started, 0)
        cluster.wait_running(LATE)  # the freed half
        assert claimed_device(cluster, LATE) == SHARED
    except (AssertionError, TimeoutError) as error:
        raise AssertionError(
            f"{error}\n--- plugin:\n{plugin.tail(60)}\n--- kubelet:\n{cluster.node.kubelet_log(40)}"
        ) from None
    finally:
        remove(cluster, pods, ("npu-share", "npu-whole"))


def without_config_policy(cluster: RealCluster) -> None:
    """The node's cluster has the NpuConfig policy (deploy/manifests); a claim "created anyway"
    is one created while its binding is away."""
    cluster.plane.kubectl("delete", "validatingadmissionpolicybinding", POLICY, "--wait")
    wait_for(
        lambda: not refused(cluster, "probe-policy-gone", npu_config("Sometimes")),
        timeout=60,
        what="the NpuConfig policy no longer applied",
    )


def refused(cluster: RealCluster, name: str, config: str) -> str | None:
    """The API server's refusal of a claim template carrying `config`, None if it took it
    (then it is deleted again)."""
    text = template(name, memory="1Gi", selector=CHIP_ZERO, config=config, device_class=SHARE_CLASS)
    try:
        cluster.apply(text)
    except ControlPlaneError as error:
        return str(error)
    remove(cluster, (), (name,))
    return None


@pytest.mark.timeout(600)
def test_a_bad_config_is_refused_at_create_and_fails_its_prepare_if_created_anyway(
    sharing_plugin: Any,
) -> None:
    cluster, _, plugin = sharing_plugin
    cases = {
        "exclusive-share": ("Exclusive", "Exclusive needs a whole chip"),
        "bad-strategy": ("Sometimes", '"Sometimes" is not Exclusive or Shared'),
    }
    try:
        half = share_memory(cluster)
        message = refused(cluster, "bad-strategy", npu_config("Sometimes")) or ""
        assert f"{POLICY}" in message, message
        assert "config[0].opaque.parameters.sharing.strategy" in message, message
        assert refused(cluster, "exclusive-share", npu_config("Exclusive")) is None
        without_config_policy(cluster)
        for name, (strategy, _) in cases.items():
            config = npu_config(strategy)
            share = template(
                name,
                memory=f"{half}Gi",
                selector=CHIP_ZERO,
                config=config,
                device_class=SHARE_CLASS,
            )
            cluster.apply(share)
            cluster.apply(pod(name, name))
        for name, (_, said) in cases.items():
            events = wait_for(
                lambda n=name: [
                    e for e in claim_events(cluster, "PrepareFailed")
                    if e["involvedObject"]["name"].startswith(f"{n}-npu")
                ],
                timeout=90,
                what=f"a PrepareFailed event on {name}'s claim",
            )  # fmt: skip
            note = events[0]["message"]
            assert "sharing.strategy" in note, note
            assert said in note, note
            assert events[0]["type"] == "Warning"
            assert cluster.read_pod(name)["status"]["phase"] == "Pending"
    except (AssertionError, TimeoutError) as error:
        raise AssertionError(
            f"{error}\n--- plugin:\n{plugin.tail(60)}\n--- kubelet:\n{cluster.node.kubelet_log(40)}"
        ) from None
    finally:
        remove(cluster, tuple(cases), tuple(cases))
        cluster.plane.kubectl("apply", "-f", str(CONFIG_POLICY))
