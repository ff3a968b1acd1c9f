"""docs/reference/ is what tools/reference.py renders from the code and the chart now, and the
metrics table it renders from (SERIES) is what a plugin's registry serves."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from npu_dra.adapters.metrics.prometheus import PrometheusMetrics
from npu_dra.adapters.metrics.series import SERIES
from npu_dra.app.kubelet_plugin.metrics_server import watch_prefetch, watch_state
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import NodeName
from tools import reference


@pytest.mark.parametrize("name", sorted(reference.PAGES))
def test_the_reference_is_current(name: str) -> None:
    written = (reference.REFERENCE / name).read_text()
    assert written == reference.PAGES[name](), (
        f"docs/reference/{name} is stale: run `python -m tools.reference`"
    )


def served_series() -> set[str]:
    """The series names a kubelet plugin's registry (and the device plugin's) exposes."""
    metrics = PrometheusMetrics()
    inventory = SimpleNamespace(
        current=lambda: NodeInventory(node=NodeName("node-a"), devices=()), known=lambda: None
    )
    checkpoints = SimpleNamespace(load=lambda: SimpleNamespace(claims={}))
    any_: Any = SimpleNamespace(status=None)
    watch_state(metrics, inventory, any_, checkpoints)  # type: ignore[arg-type]
    watch_prefetch(metrics, SimpleNamespace(hits=0, misses=0, ready=0))  # type: ignore[arg-type]
    return {
        f"{family.name}_total" if family.type == "counter" else family.name
        for family in metrics.registry.collect()
    }


def test_the_metrics_table_is_every_series_served() -> None:
    assert {series.name for series in SERIES} == served_series()


def test_every_label_has_its_values_said() -> None:
    labels = {label for series in SERIES for label in series.labels}
    assert labels <= set(reference.label_values())
