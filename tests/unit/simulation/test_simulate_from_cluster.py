"""`simulate --from-cluster` reads the objects a snapshot holds with list requests only, page by
page, bounded, and names the flag when the server cannot be read. A hand-written ApiClient
serves the lists (tests/e2e/test_snapshot_vs_scheduler.py reads a real control plane)."""

import contextlib
import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.cluster.kube.snapshot_read import ClusterReadError, read_cluster
from npu_dra.app.cli import main

NODES = "/api/v1/nodes"
RULES_V1BETA2 = "/apis/resource.k8s.io/v1beta2/devicetaintrules"
RULES_V1ALPHA3 = "/apis/resource.k8s.io/v1alpha3/devicetaintrules"


class Answer:
    def __init__(self, status: int, document: Any) -> None:
        self.status, self.data, self.reason, self.headers = status, json.dumps(document), "x", {}
        self.response = self

    def read(self, cache_content: bool = False) -> bytes:
        return self.data.encode()

    def getheaders(self) -> dict[str, str]:
        return {}


class Configuration:
    host = "https://api.example:6443"


class ServingClient:
    """Answers each path's pages in turn (a `continue` token between them), an empty list for
    another path but 404 for DeviceTaintRules and the `missing` paths, `refuse` as that status
    for every path."""

    def __init__(
        self,
        pages: dict[str, list[list[Any]]],
        refuse: int = 0,
        missing: tuple[str, ...] = (),
        forbidden: tuple[str, ...] = (),
    ) -> None:
        self.pages, self.refuse, self.missing, self.forbidden = pages, refuse, missing, forbidden
        self.sent: list[tuple[str, str, dict[str, str]]] = []
        self.configuration = Configuration()

    def param_serialize(self, **request: Any) -> tuple[Any, ...]:
        query = dict(request["query_params"])
        self.sent.append((request["method"], request["resource_path"], query))
        return (request["resource_path"], query)

    def call_api(self, path: str, query: dict[str, str], _request_timeout: Any = None) -> Answer:
        if self.refuse:
            return Answer(self.refuse, {"kind": "Status"})
        if path in self.forbidden:
            return Answer(403, {"kind": "Status"})
        if path in self.missing or (path not in self.pages and "devicetaintrules" in path):
            return Answer(404, {"kind": "Status"})
        pages = self.pages.get(path, [[]])
        index = int(query.get("continue") or 0)
        token = str(index + 1) if index + 1 < len(pages) else ""
        return Answer(200, {"items": pages[index], "metadata": {"continue": token}})


def _node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "managedFields": [{"manager": "kubelet"}]}}


def test_every_kind_is_listed_page_by_page_with_get_only_as_kubectl_prints_it() -> None:
    api = ServingClient({NODES: [[_node("a")], [_node("b")]], RULES_V1ALPHA3: [[]]})
    found = read_cluster(api, {})  # type: ignore[arg-type]
    nodes = [o for o in found if o["kind"] == "Node"]
    assert [n["metadata"] for n in nodes] == [{"name": "a"}, {"name": "b"}]
    assert {n["apiVersion"] for n in nodes} == {"v1"}
    assert {method for method, _, _ in api.sent} == {"GET"}
    node_calls = [query for _, path, query in api.sent if path == NODES]
    assert node_calls == [{"limit": "500"}, {"limit": "500", "continue": "1"}]
    pods = [query for _, path, query in api.sent if path == "/api/v1/pods"]
    assert pods[0]["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"


def test_device_taint_rules_come_from_the_first_version_the_server_serves() -> None:
    rule = {"metadata": {"name": "r"}, "spec": {}}
    found = read_cluster(ServingClient({RULES_V1ALPHA3: [[rule]]}), {})  # type: ignore[arg-type]
    [read] = [o for o in found if o["kind"] == "DeviceTaintRule"]
    assert read["apiVersion"] == "resource.k8s.io/v1alpha3"
    assert not [o for o in read_cluster(ServingClient({}), {}) if o["kind"] == "DeviceTaintRule"]  # type: ignore[arg-type]


def test_admission_policies_are_read_where_the_credentials_may() -> None:
    policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
    policy = {"metadata": {"name": "p"}, "spec": {}}
    found = read_cluster(ServingClient({policies: [[policy]]}), {})  # type: ignore[arg-type]
    assert [o["metadata"]["name"] for o in found if o["kind"] == "ValidatingAdmissionPolicy"] == [
        "p"
    ]
    api = ServingClient({}, forbidden=(policies,))
    assert not [o for o in read_cluster(api, {}) if o["kind"] == "ValidatingAdmissionPolicy"]  # type: ignore[arg-type]


def test_a_kind_past_its_bound_stops_the_read_naming_the_flag() -> None:
    api = ServingClient({NODES: [[_node("a"), _node("b")], [_node("c")]]})
    with pytest.raises(ClusterReadError, match=r"--from-cluster: .* more than 2 Node objects"):
        read_cluster(api, {"Node": 2})  # type: ignore[arg-type]
    assert len([p for _, p, _ in api.sent if p == NODES]) == 2  # stopped there


@pytest.mark.parametrize(
    ("status", "words"),
    [(403, "forbids listing Namespace objects"), (401, "refused the credentials")],
)
def test_a_refusing_server_is_named_with_the_kubeconfig_flag(status: int, words: str) -> None:
    with pytest.raises(ClusterReadError, match=words) as caught:
        read_cluster(ServingClient({}, refuse=status), {})  # type: ignore[arg-type]
    assert "--kubeconfig" in str(caught.value)
    assert "https://api.example:6443" in str(caught.value)


def test_a_server_without_dra_v1_is_named() -> None:
    api = ServingClient({}, missing=("/apis/resource.k8s.io/v1/deviceclasses",))
    with pytest.raises(ClusterReadError, match=r"resource\.k8s\.io/v1 needs Kubernetes 1\.34"):
        read_cluster(api, {})  # type: ignore[arg-type]


def _simulate(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["simulate", *args])
    return code, err.getvalue()


def test_an_unreachable_server_stops_the_run_naming_the_flag(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    code, err = _simulate("--from-cluster", "--kubeconfig", str(kubeconfig))
    assert code == 1, err
    assert f"--from-cluster: the API server http://127.0.0.1:{port} is unreachable" in err


def test_an_unusable_kubeconfig_is_named(tmp_path: Path) -> None:
    code, err = _simulate("--from-cluster", "--kubeconfig", str(tmp_path / "absent"))
    assert code == 1, err
    assert f"--kubeconfig {tmp_path / 'absent'} is unusable" in err


def test_from_and_from_cluster_are_one_state_too_many(tmp_path: Path) -> None:
    code, err = _simulate("--from", str(tmp_path / "x.yaml"), "--from-cluster")
    assert code == 2
    assert "--from and --from-cluster" in err
