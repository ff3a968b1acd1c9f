"""The README's quickstart, run as written on the real node, so the page cannot drift from the
code: every `sh` block of its "Quickstart" section after the image build, line by line, with the
built kubectl and the test cluster's kubeconfig. The only substitutions, each what this machine
needs and an operator does not:

- the image is not built with `docker build` and pushed (no Docker engine, no registry here): the
  project's image builder makes it and `ctr images import` puts it on the node, under the name
  and tag the manifests' Kustomization names; the README's registry name therefore becomes that
  name (so its `sed` of the Kustomization changes nothing here; the file is restored after);
- `<node>` is the test node's name;
- this node runs no kube-proxy, so the DaemonSet's container is pointed at the API server's
  loopback address (KUBERNETES_SERVICE_HOST), as test_daemonset_on_real_node does: by a patch in
  the Kustomization, so the apply's first pod already has it. (Set after the apply, as this test
  once did, it made a second pod beside a first that could not reach the API server; a first pod
  slow to go kept the rollout's status at "0 out of 1 new pods" and failed CI once.);
- this folder's cluster already holds the manifests' access objects, applied client-side by its
  fixture (the other tests run the plugin under that identity), so the server-side apply takes
  over their fields with --force-conflicts, which a fresh cluster does not need.
A command that fails is reported with what the namespace's pods, their events and the plugin
pods' logs say. Whatever happened, the DaemonSet's pods are gone from the node before the next
test of this folder starts (each of those runs a plugin of the same driver).
The last command's output must be `npu-smi info` run inside the pod. Then the upgrade of
docs/upgrade.md: `newTag` set in the Kustomization to a second tag of the image and the same
apply run again, without --force-conflicts: it re-applies cleanly, the DaemonSet rolls to the new
tag, and the pod holding an NPU keeps running."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.e2e.real_node.cluster import RealCluster
from tests.support.ascend_host import fake_ascend_host
from tests.support.node_fixtures import IMAGES_CACHE
from tests.support.plugin_image import TAG, build_plugin_image
from tests.support.version import VERSION

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
REGISTRY_NAME = "registry.example.com/npu-dra"
LOCAL_NAME = "npu-dra"  # deploy/manifests/Kustomization's image name, imported on the node
KUSTOMIZATION = REPO / "deploy" / "manifests" / "Kustomization"
APPLY_MANIFESTS = "kubectl apply --server-side -k deploy/manifests/"
DAEMONSET = "daemonset/ascend-npu-dra-kubeletplugin"
PLUGIN_LABEL = "app=ascend-npu-dra-kubeletplugin"
PODS_GONE_S = 120.0
NEXT_TAG = f"{VERSION}-next"  # a second tag of the same image, as an upgrade would bring
# What the quickstart adds to this folder's cluster; the access objects, the policies and the
# DeviceClass were there before it (the folder's fixture applies them) and the tests after it
# use them, so they stay.
CLEAN_UP = ("deploy/examples/claim-template.yaml", "deploy/manifests/50-daemonset.yaml")


def quickstart_commands(readme: str) -> list[str]:
    """The command lines of the quickstart's `sh` blocks, the image build's block left out."""
    section = readme.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if any(line.startswith("docker build") for line in lines):
            continue
        commands += [line for line in lines if not line.startswith("#")]
    return commands


def test_the_quickstart_reads_as_the_steps_it_promises() -> None:
    commands = quickstart_commands(README.read_text())
    assert commands[0].startswith("kubectl label node <node> accelerator=")
    assert APPLY_MANIFESTS in commands
    assert commands[-1].endswith("-- npu-smi info")


def test_the_quickstarts_edit_puts_the_registry_in_the_kustomization(tmp_path: Path) -> None:
    (edit,) = [c for c in quickstart_commands(README.read_text()) if c.startswith("sed ")]
    copy = tmp_path / "deploy" / "manifests" / "Kustomization"
    copy.parent.mkdir(parents=True)
    copy.write_text(KUSTOMIZATION.read_text())
    run(edit, dict(os.environ), cwd=tmp_path)
    images = yaml.safe_load(copy.read_text())["images"]
    assert [image["newName"] for image in images] == [REGISTRY_NAME]


@pytest.mark.timeout(900)
def test_the_readme_quickstart_runs_on_the_real_node(real_cluster: RealCluster) -> None:
    cluster = real_cluster
    archive = build_plugin_image(IMAGES_CACHE, IMAGES_CACHE / "plugin" / "npu-dra.tar")
    cluster.node.ctr("images", "import", str(archive), timeout=600)
    env = {
        **os.environ,
        "KUBECONFIG": str(cluster.plane.kubeconfig),
        "PATH": f"{cluster.plane.bin_dir}:{os.environ['PATH']}",
    }
    port = cluster.plane.server.rsplit(":", 1)[1]
    kustomization = KUSTOMIZATION.read_text()
    with fake_ascend_host(range(8), dev_dir=Path("/dev"), only_devices=True):
        try:
            KUSTOMIZATION.write_text(with_service_env(kustomization, port))
            output = ""
            for command in quickstart_commands(README.read_text()):
                line = command.replace("<node>", cluster.node.name)
                if command == APPLY_MANIFESTS:
                    line += " --force-conflicts"
                output = diagnosed(cluster, env, line.replace(REGISTRY_NAME, LOCAL_NAME))
            upgraded_image = upgrade_by_manifests(cluster, env)
        finally:
            KUSTOMIZATION.write_text(kustomization)
            left_behind = clean_up(cluster, env)
    assert not left_behind, left_behind  # the uninstall stopped every plugin pod
    assert "npu-smi" in output, output
    assert "910B4" in output, output
    assert upgraded_image.endswith(f":{NEXT_TAG}"), upgraded_image


def upgrade_by_manifests(cluster: RealCluster, env: dict[str, str]) -> str:
    """docs/upgrade.md: newTag changed, the same two commands; the image the new pod runs."""
    cluster.node.ctr("images", "tag", "--force", TAG, f"{TAG.rsplit(':', 1)[0]}:{NEXT_TAG}")
    started = pod_container(env, "npu-pod")
    kustomization = yaml.safe_load(KUSTOMIZATION.read_text())
    kustomization["images"][0]["newTag"] = NEXT_TAG
    KUSTOMIZATION.write_text(yaml.safe_dump(kustomization))
    diagnosed(cluster, env, APPLY_MANIFESTS)  # no --force-conflicts: the first apply owns it
    diagnosed(cluster, env, f"kubectl -n ascend-dra rollout status {DAEMONSET} --timeout=5m")
    assert pod_container(env, "npu-pod") == started  # the running pod kept its NPU
    image = "jsonpath='{.spec.template.spec.containers[0].image}'"
    return run(f"kubectl -n ascend-dra get {DAEMONSET} -o {image}", env)


def with_service_env(kustomization: str, port: str) -> str:
    """The Kustomization with a patch that points the plugin's container at the API server's
    loopback address (this node has no kube-proxy to route the service address)."""
    document = yaml.safe_load(kustomization)
    environment = [("KUBERNETES_SERVICE_HOST", "127.0.0.1"), ("KUBERNETES_SERVICE_PORT", port)]
    operations = [
        {"op": "add", "path": "/spec/template/spec/containers/0/env/-",
         "value": {"name": name, "value": value}}
        for name, value in environment
    ]  # fmt: skip
    document["patches"] = [
        {"target": {"kind": "DaemonSet", "name": DAEMONSET.split("/")[1]},
         "patch": yaml.safe_dump(operations)}
    ]  # fmt: skip
    return yaml.safe_dump(document, sort_keys=False)


def diagnosed(cluster: RealCluster, env: dict[str, str], line: str) -> str:
    """`run(line)`; if it fails, the error also says what the plugin's pods and logs say."""
    try:
        return run(line, env)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n{diagnosis(cluster, env)}") from None


def diagnosis(cluster: RealCluster, env: dict[str, str]) -> str:
    parts = [
        run(f"kubectl -n ascend-dra {what}", env, check=False, stderr=True)
        for what in ("get daemonset,pods -o wide", "describe pods", "get events")
    ]
    for pod in plugin_pods(env):
        parts.append(f"--- log of {pod}:\n{cluster.node.pod_log('ascend-dra', pod)}")
    return "\n".join(parts)


def plugin_pods(env: dict[str, str]) -> list[str]:
    names = run(f"kubectl -n ascend-dra get pods -l {PLUGIN_LABEL} -o name", env, check=False)
    return [name.removeprefix("pod/") for name in names.split()]


def clean_up(cluster: RealCluster, env: dict[str, str]) -> str:
    """What the quickstart added, deleted; then the DaemonSet's pods waited for (they stop once
    no claim is prepared). Any still there after PODS_GONE_S are deleted at once, for the next
    tests run plugins of the same driver on this node; what they said is returned."""
    for manifest in CLEAN_UP:
        run(f"kubectl delete --ignore-not-found --wait=true -f {manifest}", env, check=False)
    deadline = time.monotonic() + PODS_GONE_S
    while plugin_pods(env) and time.monotonic() < deadline:
        time.sleep(1)
    left = plugin_pods(env)
    if not left:
        return ""
    said = f"plugin pods left {PODS_GONE_S:.0f} s after the uninstall: {left}\n"
    said += diagnosis(cluster, env)
    run(f"kubectl -n ascend-dra delete pods -l {PLUGIN_LABEL} --grace-period=0 --force",
        env, check=False)  # fmt: skip
    deadline = time.monotonic() + PODS_GONE_S
    while plugin_pods(env) and time.monotonic() < deadline:
        time.sleep(1)
    return said


def pod_container(env: dict[str, str], pod: str) -> str:
    return run(
        f"kubectl -n ascend-dra get pod {pod} -o "
        "jsonpath='{.status.containerStatuses[0].containerID} {.status.phase}'",
        env,
    )


def run(
    line: str, env: dict[str, str], *, check: bool = True, cwd: Path = REPO, stderr: bool = False
) -> str:
    result = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=400,
        check=False,
    )  # fmt: skip
    if check and result.returncode != 0:
        raise AssertionError(
            f"`{line}` exited {result.returncode}:\n{result.stderr}{result.stdout}"
        )
    return result.stdout + result.stderr if stderr else result.stdout
