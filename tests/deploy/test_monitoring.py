"""The chart's optional dashboard and alert rules (monitoring.*, off by default): they render
only when asked, carry files/ as they are, and use no series the driver does not declare (SERIES;
tests/integration/kubelet_plugin/test_monitoring_series.py scrapes them from a running plugin)
or the kubelet does not serve."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from npu_dra.adapters.metrics.series import SERIES, HistogramSeries
from tests.deploy.helm_cli import CHART, Helm
from tests.deploy.objects import only

DASHBOARD = CHART / "files" / "npu-dra-dashboard.json"
RULES = CHART / "files" / "npu-dra-rules.yaml"
# The kubelet's series the files use, and where v1.34.3 declares them (k8s.io/kubernetes
# pkg/kubelet/metrics/metrics.go: DRASubsystem "dra" + DRAOperationsDurationKey, a histogram).
KUBELET_SERIES = {"dra_operations_duration_seconds_bucket"}
NAME = re.compile(r"\b((?:npu_dra|dra)_[a-z_]+)\b")
ENABLED = {"monitoring": {"dashboard": {"enabled": True}, "prometheusRule": {"enabled": True}}}


def expressions() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    rules = yaml.safe_load(RULES.read_text())["groups"]
    return panels + [r["expr"] for group in rules for r in group["rules"]]


def served_names() -> set[str]:
    """Every sample name the driver's series give (a histogram's three, a counter's _total)."""
    names = set()
    for series in SERIES:
        if isinstance(series, HistogramSeries):
            names |= {f"{series.name}{suffix}" for suffix in ("_bucket", "_sum", "_count")}
        else:
            names.add(series.name)
    return names


def used_names() -> set[str]:
    return {name for expr in expressions() for name in NAME.findall(expr)}


def test_every_series_the_dashboard_and_rules_use_is_served() -> None:
    used = used_names()
    assert used - served_names() - KUBELET_SERIES == set()
    assert "npu_dra_claim_device_info" in used  # which claim holds which NPU
    assert "dra_operations_duration_seconds_bucket" in used


def test_nothing_renders_by_default(helm: Helm) -> None:
    kinds = {o["kind"] for o in helm.template()}
    assert "PrometheusRule" not in kinds
    assert "ConfigMap" not in kinds


def test_asked_for_they_carry_the_files_as_they_are(helm: Helm) -> None:
    rendered = helm.template(values=ENABLED)
    dashboard = only(rendered, "ConfigMap")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["npu-dra-dashboard.json"]) == json.loads(
        DASHBOARD.read_text()
    )
    rule: dict[str, Any] = only(rendered, "PrometheusRule")
    assert rule["spec"] == yaml.safe_load(RULES.read_text())
    assert rule["metadata"]["namespace"] == "ascend-dra"


def check_rules(promtool: Path, groups: dict[str, Any], tmp_path: Path) -> str:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(groups))
    result = subprocess.run(
        [str(promtool), "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    return f"exit {result.returncode}: {result.stdout}{result.stderr}"


def test_the_rendered_rules_pass_promtool(helm: Helm, promtool: Path, tmp_path: Path) -> None:
    spec = only(helm.template(values=ENABLED), "PrometheusRule")["spec"]
    rules = sum(len(group["rules"]) for group in spec["groups"])
    checked = check_rules(promtool, spec, tmp_path)
    assert checked.startswith("exit 0:"), checked
    assert f"SUCCESS: {rules} rules found" in checked, checked
    broken = {"groups": [{"name": "x", "rules": [{"alert": "A", "expr": "rate(x[5m]"}]}]}
    assert not check_rules(promtool, broken, tmp_path).startswith("exit 0:")
