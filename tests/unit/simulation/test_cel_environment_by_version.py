"""simulate compiles selectors in the CEL environment of the version it simulates: a selector
using cel-go's lists extension (`sort`), which a v1.36.3 API server offers and a v1.34.3 one
refuses, is refused only where simulate is told 1.34; and `device.allowMultipleAllocations`
reads the published device where consumable capacity is served."""

from __future__ import annotations

from pathlib import Path

from tests.unit.simulation.test_simulated_shared_chips import CLASS, node, simulate

SORTED = "[3, 1, 2].sort() == [1, 2, 3]"


def pod(expression: str) -> str:
    return f"""\
kind: ResourceClaimTemplate
metadata: {{name: t, namespace: default}}
spec:
  spec:
    devices:
      requests:
      - name: npu
        exactly:
          deviceClassName: npu.huawei.com
          selectors: [{{cel: {{expression: '{expression}'}}}}]
---
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers: [{{name: c, image: x}}]
  resourceClaims: [{{name: npu, resourceClaimTemplateName: t}}]
"""


def bound_nodes(document: dict[str, object]) -> list[object]:
    pods = document.get("pods") or []
    assert isinstance(pods, list)
    return [p.get("node") for p in pods if isinstance(p, dict)]


def test_the_lists_extension_is_v136s_only(tmp_path: Path) -> None:
    text = node() + CLASS + "---\n" + pod(SORTED)
    code, document, err = simulate(tmp_path, text, "--kubernetes-version", "1.36")
    assert code == 0, err
    assert bound_nodes(document) == ["n"], document
    code, _, err = simulate(tmp_path, text, "--kubernetes-version", "1.34")
    assert code == 4, err
    assert "sort" in err, err


def test_a_selector_sees_whether_a_device_is_allocated_several_times(tmp_path: Path) -> None:
    shared = node(", sharedChips: all") + CLASS + "---\n" + pod("device.allowMultipleAllocations")
    code, document, err = simulate(tmp_path, shared, "--kubernetes-version", "1.36")
    assert code == 0, err
    assert bound_nodes(document) == ["n"], document
    whole = node() + CLASS + "---\n" + pod("device.allowMultipleAllocations")
    code, document, err = simulate(tmp_path, whole, "--kubernetes-version", "1.36")
    assert bound_nodes(document) == [None], (document, err)
