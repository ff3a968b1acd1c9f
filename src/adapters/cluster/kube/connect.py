"""Building an API client: in-cluster service account, or a kubeconfig file. Never at import.

Each loader's module is imported only on its path: the kubeconfig loader (oauthlib, requests)
is most of the client's import cost and a plugin in a pod never runs it (see __init__.py)."""

from kubernetes import client


def api_client(kubeconfig: str | None = None) -> client.ApiClient:
    """From `kubeconfig` if given, else the pod's service account (in-cluster config)."""
    configuration = client.Configuration()
    if kubeconfig:
        from kubernetes.config import kube_config

        kube_config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        from kubernetes.config import incluster_config

        incluster_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.retries = False  # KubeCluster retries, within its budget
    return client.ApiClient(configuration)
