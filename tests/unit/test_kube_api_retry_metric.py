"""API retries are heard, by operation, so /metrics can count them (npu_dra_api_retries_total)."""

import socket

import pytest
from kubernetes import client

from npu_dra.adapters.cluster.kube.cluster import KubeCluster
from npu_dra.adapters.cluster.kube.retry import with_retries
from npu_dra.adapters.metrics.memory import MemoryMetrics
from npu_dra.app.container import container_for
from npu_dra.app.options import defaults
from npu_dra.domain.errors import ClusterUnavailable


def test_each_retry_of_a_transient_failure_is_heard() -> None:
    failures = [ConnectionError("reset"), TimeoutError("slow")]
    heard: list[str] = []

    def call(_: object) -> str:
        if failures:
            raise failures.pop(0)
        return "answer"

    assert with_retries("x", call, budget_s=10, on_retry=lambda: heard.append("x")) == "answer"
    assert heard == ["x", "x"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_cluster_adapter_names_the_operation_it_retries() -> None:
    configuration = client.Configuration()
    configuration.host = f"http://127.0.0.1:{closed_port()}"
    metrics = MemoryMetrics()
    cluster = KubeCluster(
        client.ApiClient(configuration),
        retry_budget_s=0.5,
        on_retry=lambda operation: metrics.api_retry(operation=operation),
    )
    with pytest.raises(ClusterUnavailable):
        cluster.list_slices()
    assert metrics.retries
    assert set(metrics.retries) == {"list_slices"}


def test_the_composition_root_counts_retries_only_where_metrics_are_served(tmp_path) -> None:  # type: ignore[no-untyped-def]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{closed_port()}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    served = container_for(defaults(kubeconfig=str(kubeconfig), metrics_port=0))
    quiet = container_for(defaults(kubeconfig=str(kubeconfig)))
    try:
        assert served.cluster()._on_retry is not None
        assert quiet.cluster()._on_retry is None
    finally:
        served.shutdown_resources()
        quiet.shutdown_resources()
