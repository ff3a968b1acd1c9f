"""deploy/manifests/Kustomization, what the README's Quickstart and docs/upgrade.md apply with
`kubectl apply --server-side -k`: it must hold every manifest `kubectl apply -f` takes, in the
same order, and set the image the DaemonSet names."""

from __future__ import annotations

from typing import Any

import yaml

from tests.deploy.objects import MANIFESTS, container, manifest_files, manifests, only

KUSTOMIZATION = MANIFESTS / "Kustomization"


def kustomization() -> dict[str, Any]:
    return yaml.safe_load(KUSTOMIZATION.read_text())


def test_it_lists_every_manifest_in_file_order() -> None:
    assert kustomization()["resources"] == [path.name for path in manifest_files()]


def test_its_image_is_the_daemonsets() -> None:
    (image,) = kustomization()["images"]
    daemonset = only(manifests(), "DaemonSet")
    assert container(daemonset)["image"] == f"{image['name']}:{image['newTag']}"
    assert image["newName"] == image["name"]  # the Quickstart's sed replaces exactly this
