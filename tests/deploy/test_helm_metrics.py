"""The chart with metrics on: the port reaches the plugin's flag and the container's ports, the
ServiceMonitor (and its headless Service) render behind their value, the schema accepts them,
and asking for a ServiceMonitor without a metrics port is an error, not a silent scrape of
nothing. The taint values reach their flags too."""

from __future__ import annotations

import pytest

from tests.deploy.helm_cli import Helm, HelmError
from tests.deploy.objects import container, only
from tests.deploy.test_helm_chart import kubelet_plugin_settings

METRICS_ON = {"metricsPort": 9464}


def test_metrics_on_reach_the_plugins_flag_and_declare_no_host_port(helm: Helm) -> None:
    """On the host network a declared container port is a hostPort: a surge's new plugin pod
    could not be scheduled beside the old one holding it."""
    rendered = helm.template(values=METRICS_ON)
    assert kubelet_plugin_settings(rendered).metrics_port == 9464
    assert "ports" not in container(only(rendered, "DaemonSet"))
    assert not {o["kind"] for o in rendered} & {"Service", "ServiceMonitor"}


def test_the_service_monitor_renders_behind_its_value_and_scrapes_the_metrics_port(
    helm: Helm,
) -> None:
    rendered = helm.template(
        values={
            **METRICS_ON,
            "serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "kps"}},
        }
    )
    service, monitor = only(rendered, "Service"), only(rendered, "ServiceMonitor")
    daemonset = only(rendered, "DaemonSet")
    pod_labels = daemonset["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9464, "targetPort": 9464, "protocol": "TCP"}
    ]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "kps"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= (
        service["metadata"]["labels"].items()
    )
    assert monitor["spec"]["endpoints"] == [
        {"port": "metrics", "path": "/metrics", "interval": "15s"}
    ]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["ascend-dra"]}


def test_a_service_monitor_without_a_metrics_port_is_an_error(helm: Helm) -> None:
    with pytest.raises(HelmError, match=r"serviceMonitor\.enabled needs metricsPort"):
        helm.template(set_values=["serviceMonitor.enabled=true"])


def test_taint_values_reach_their_flags(helm: Helm) -> None:
    rendered = helm.template(
        values={"deviceTaints": "off", "taintEffects": "Critical=NoSchedule,Degraded=NoSchedule"}
    )
    settings = kubelet_plugin_settings(rendered)
    assert settings.device_taints == "off"
    assert settings.taint_effects == "Critical=NoSchedule,Degraded=NoSchedule"
