"""The manifests' upgrade path on a real API server (v1.34.3), as docs/upgrade.md gives it:
`kubectl apply --server-side -k deploy/manifests/` applies, and applies again cleanly after the
image is changed in deploy/manifests/Kustomization. The path it replaces fails as the page says:
after `kubectl set image` the same apply stops on a conflict with the `kubectl-set` manager, and
`--force-conflicts` takes the image back.

The manifests are applied through an overlay of a copy of deploy/manifests (the Kustomization
as committed, every file): a namespace and a name suffix of this test's own, and the DaemonSet
kept off every node, so that the session's shared plane keeps its own objects and no pod starts.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.deploy.objects import MANIFESTS
from tests.deploy.on_cluster import unique
from tests.support.controlplane import ControlPlane

NOWHERE = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "npu-dra.test/nowhere", "operator": "Exists"}]}
            ]
        }
    }
}


def overlay(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """(the copy of deploy/manifests, the overlay using it as its base)."""
    base = tmp_path / "manifests"
    shutil.copytree(MANIFESTS, base)
    site = tmp_path / "site"
    site.mkdir()
    patch = [{"op": "replace", "path": "/spec/template/spec/affinity", "value": NOWHERE}]
    kustomization = {
        "resources": ["../manifests"],
        "namespace": name,
        "nameSuffix": f"-{name}",
        "patches": [{"target": {"kind": "DaemonSet"}, "patch": yaml.safe_dump(patch)}],
    }
    (site / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return base, site


def set_tag(base: Path, tag: str) -> None:
    """What an operator edits for an upgrade: the image's newTag in the Kustomization."""
    path = base / "Kustomization"
    kustomization = yaml.safe_load(path.read_text())
    kustomization["images"][0]["newTag"] = tag
    path.write_text(yaml.safe_dump(kustomization))


@pytest.fixture
def applied(
    control_plane: ControlPlane, tmp_path: Path
) -> Iterator[tuple[ControlPlane, Path, Path, str]]:
    name = unique("reapply")
    base, site = overlay(tmp_path, name)
    try:
        yield control_plane, base, site, name
    finally:
        control_plane.kubectl("delete", "--ignore-not-found", "--wait=false", "-k", str(site))


def apply(plane: ControlPlane, site: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return plane.kubectl("apply", "--server-side", "-k", str(site), *extra, check=False)


def image(plane: ControlPlane, name: str) -> str:
    result = plane.kubectl(
        "-n", name, "get", f"daemonset/ascend-npu-dra-kubeletplugin-{name}",
        "-o", "jsonpath={.spec.template.spec.containers[0].image}",
    )  # fmt: skip
    return result.stdout


def test_the_manifests_apply_again_after_the_kustomizations_image_changes(
    applied: tuple[ControlPlane, Path, Path, str],
) -> None:
    plane, base, site, name = applied
    first = apply(plane, site)
    assert first.returncode == 0, first.stderr
    before = image(plane, name)
    set_tag(base, "9.9.9")
    again = apply(plane, site)
    assert again.returncode == 0, again.stderr
    assert image(plane, name) == before.rsplit(":", 1)[0] + ":9.9.9"


def test_after_kubectl_set_image_the_apply_conflicts_until_forced(
    applied: tuple[ControlPlane, Path, Path, str],
) -> None:
    plane, _, site, name = applied
    assert apply(plane, site).returncode == 0
    plane.kubectl(
        "-n", name, "set", "image", f"daemonset/ascend-npu-dra-kubeletplugin-{name}",
        "kubeletplugin=registry.example.com/npu-dra:9.9.9",
    )  # fmt: skip
    conflict = apply(plane, site)
    assert conflict.returncode != 0
    assert 'conflict with "kubectl-set"' in conflict.stderr, conflict.stderr
    assert ".image" in conflict.stderr, conflict.stderr
    forced = apply(plane, site, "--force-conflicts")
    assert forced.returncode == 0, forced.stderr
    assert not image(plane, name).startswith("registry.example.com/")
