"""Building an API client: in-cluster service account, or a kubeconfig file. Never at import.

Each loader's module is imported only on its path: the kubeconfig loader (oauthlib, requests)
is most of the client's import cost and a plugin in a pod never runs it (see __init__.py)."""

from kubernetes import client


def api_client(kubeconfig: str | None = None, *, persist: bool = True) -> client.ApiClient:
    """From `kubeconfig` if given, else the pod's service account (in-cluster config);
    `persist=False` never writes a refreshed token back to the kubeconfig (a read-only user)."""
    configuration = client.Configuration()
    if kubeconfig:
        from kubernetes.config import kube_config

        kube_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, client_configuration=configuration, persist_config=persist
        )
    else:
        from kubernetes.config import incluster_config

        incluster_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.retries = False  # KubeCluster retries, within its budget
    return client.ApiClient(configuration)
