"""Container: what a process shares, and the node graph it runs (the composition root: see
app/container/__init__.py)."""

from dependency_injector import containers, providers

from npu_dra.app.container.node import NodeContainer
from npu_dra.app.options import Settings
from npu_dra.app.wiring.cluster import (
    kube_api,
    kube_claim_status,
    kube_cluster,
    kube_consumable_support,
    kube_daemonset_watcher,
    kube_events,
    kube_taint_support,
    memory_claim_status,
    memory_cluster,
)
from npu_dra.app.wiring.node import prometheus_metrics
from npu_dra.app.wiring.simulate import selector_evaluator


class Container(containers.DeclarativeContainer):
    settings: providers.Dependency[Settings] = providers.Dependency(instance_of=Settings)

    # One set of Prometheus series per process: the API adapter counts its retries into the
    # same registry the node's /metrics serves.
    metrics = providers.Singleton(prometheus_metrics)
    api = providers.Resource(kube_api, settings.provided.kubeconfig)
    cluster = providers.Selector(
        settings.provided.cluster,
        memory=providers.Singleton(memory_cluster, settings),
        kubernetes=providers.Singleton(kube_cluster, api, settings, metrics.provider),
    )
    taint_support = providers.Selector(
        settings.provided.cluster,
        memory=cluster,
        kubernetes=providers.Singleton(kube_taint_support, api),
    )
    event_recorder = providers.Selector(
        settings.provided.cluster,
        memory=cluster,
        kubernetes=providers.Singleton(kube_events, api),
    )
    consumable_support = providers.Selector(
        settings.provided.cluster,
        memory=cluster,
        kubernetes=providers.Singleton(kube_consumable_support, api),
    )
    daemonset_watcher = providers.Selector(
        settings.provided.cluster,
        memory=providers.Object(None),
        kubernetes=providers.Singleton(kube_daemonset_watcher, api),
    )
    # Claims' status.devices (KEP-4817): app/services/claim_status.py.
    claim_status_writer = providers.Selector(
        settings.provided.cluster,
        memory=providers.Singleton(memory_claim_status, cluster),
        kubernetes=providers.Singleton(kube_claim_status, api),
    )
    selector_evaluator = providers.Singleton(selector_evaluator, settings)
    node = providers.Container(
        NodeContainer,
        settings=settings,
        cluster=cluster,
        taint_support=taint_support,
        event_recorder=event_recorder,
        consumable_support=consumable_support,
        node_directory=providers.Selector(
            settings.provided.cluster, memory=providers.Object(None), kubernetes=cluster
        ),
        metrics=metrics,
        daemonset_watcher=daemonset_watcher,
        status_writer=claim_status_writer,
    )


def container_for(settings: Settings) -> Container:
    return Container(settings=providers.Object(settings))


def node_container(root: Container, settings: Settings) -> NodeContainer:
    """Another node's plugin over `root`'s cluster API (the simulation's nodes)."""
    return NodeContainer(settings=providers.Object(settings), cluster=root.cluster)
