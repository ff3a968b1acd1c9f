"""The chart's NOTES.txt, what `helm install` prints: the namespace the objects went to (the
release's with `-n`), the label that namespace needs where the chart did not make it, and the
commands to check the install with. Rendered through a copy of the chart whose extra template
holds the notes (`helm template` leaves NOTES.txt out)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.helm_cli import CHART, Helm
from tests.deploy.objects import only

SHOW_NOTES = """apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
data:
  notes: {{ include "npu-dra.notes" . | quote }}
"""


def notes(helm: Helm, tmp_path: Path, *, namespace: str = "default", **values: Any) -> str:
    chart = tmp_path / "npu-dra"
    shutil.copytree(CHART, chart)
    (chart / "templates" / "show-notes.yaml").write_text(SHOW_NOTES)
    rendered = helm.template(chart=chart, namespace=namespace, values=values)
    return str(only(rendered, "ConfigMap")["data"]["notes"])


def test_without_n_the_notes_name_ascend_dra_and_ask_no_label(helm: Helm, tmp_path: Path) -> None:
    text = notes(helm, tmp_path)
    assert "in namespace ascend-dra" in text
    assert "kubectl -n ascend-dra rollout status daemonset/ascend-npu-dra-kubeletplugin" in text
    assert "kubectl get resourceslices" in text
    assert "pod-security.kubernetes.io/enforce=privileged" not in text


def test_with_n_the_notes_name_that_namespace_and_the_label_it_needs(
    helm: Helm, tmp_path: Path
) -> None:
    text = notes(helm, tmp_path, namespace="gpu-ops")
    assert "in namespace gpu-ops" in text
    assert "kubectl label namespace gpu-ops pod-security.kubernetes.io/enforce=privileged" in text
    assert "--reset-then-reuse-values -n gpu-ops" in text


@pytest.mark.parametrize("enabled", [True, False])
def test_the_notes_say_which_plugin_runs(helm: Helm, tmp_path: Path, enabled: bool) -> None:
    text = notes(helm, tmp_path, devicePlugin={"enabled": enabled})
    assert ("classic device plugin" in text) is enabled
    assert ("kubectl get resourceslices" in text) is not enabled
