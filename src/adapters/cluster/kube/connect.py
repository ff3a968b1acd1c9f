"""Building an API client: in-cluster service account, or a kubeconfig file. Never at import."""

from kubernetes import client, config


def api_client(kubeconfig: str | None = None) -> client.ApiClient:
    """From `kubeconfig` if given, else the pod's service account (in-cluster config)."""
    configuration = client.Configuration()
    if kubeconfig:
        config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.retries = False  # KubeCluster retries, within its budget
    return client.ApiClient(configuration)
