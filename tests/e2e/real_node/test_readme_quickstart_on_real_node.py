"""The README's quickstart, run as written on the real node, so the page cannot drift from the
code: every `sh` block of its "Quickstart" section after the image build, line by line, with the
built kubectl and the test cluster's kubeconfig. The only substitutions, each what this machine
needs and an operator does not:

- the image is not built with `docker build` and pushed (no Docker engine, no registry here): the
  project's image builder makes it and `ctr images import` puts it on the node, under the name
  and tag the manifests' Kustomization names; the README's registry name therefore becomes that
  name (so its `sed` of the Kustomization changes nothing here; the file is restored after);
- `<node>` is the test node's name;
- this node runs no kube-proxy, so after the manifests are applied the DaemonSet's container is
  pointed at the API server's loopback address (KUBERNETES_SERVICE_HOST), as
  test_daemonset_on_real_node does;
- this folder's cluster already holds the manifests' access objects, applied client-side by its
  fixture (the other tests run the plugin under that identity), so the server-side apply takes
  over their fields with --force-conflicts, which a fresh cluster does not need.
The last command's output must be `npu-smi info` run inside the pod. Then the upgrade of
docs/upgrade.md: `newTag` set in the Kustomization to a second tag of the image and the same
apply run again, without --force-conflicts: it re-applies cleanly, the DaemonSet rolls to the new
tag, and the pod holding an NPU keeps running."""

from __future__ import annotations

import os
import re
import subprocess
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
            output = ""
            for command in quickstart_commands(README.read_text()):
                line = command.replace("<node>", cluster.node.name)
                if command == APPLY_MANIFESTS:
                    line += " --force-conflicts"
                output = run(line.replace(REGISTRY_NAME, LOCAL_NAME), env)
                if command == APPLY_MANIFESTS:
                    run(
                        f"kubectl -n ascend-dra set env {DAEMONSET} "
                        f"KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT={port}",
                        env,
                    )
            upgraded_image = upgrade_by_manifests(cluster, env)
        finally:
            KUSTOMIZATION.write_text(kustomization)
            for manifest in CLEAN_UP:
                run(
                    f"kubectl delete --ignore-not-found --wait=true -f {manifest}", env, check=False
                )
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
    run(APPLY_MANIFESTS, env)  # no --force-conflicts: the first apply owns the image
    run(f"kubectl -n ascend-dra rollout status {DAEMONSET} --timeout=5m", env)
    assert pod_container(env, "npu-pod") == started  # the running pod kept its NPU
    image = "jsonpath='{.spec.template.spec.containers[0].image}'"
    return run(f"kubectl -n ascend-dra get {DAEMONSET} -o {image}", env)


def pod_container(env: dict[str, str], pod: str) -> str:
    return run(
        f"kubectl -n ascend-dra get pod {pod} -o "
        "jsonpath='{.status.containerStatuses[0].containerID} {.status.phase}'",
        env,
    )


def run(line: str, env: dict[str, str], *, check: bool = True, cwd: Path = REPO) -> str:
    result = subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=400,
        check=False,
    )  # fmt: skip
    if check and result.returncode != 0:
        raise AssertionError(
            f"`{line}` exited {result.returncode}:\n{result.stderr}{result.stdout}"
        )
    return result.stdout
