"""RawResourceApi builds the requests the generated ResourceV1Api would, on the client's own
ApiClient: a hand-written ApiClient records what it was asked to send and answers as told."""

import ast
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import ApiException

from npu_dra.adapters.cluster.kube.raw import RawResourceApi


class Answer:
    def __init__(self, status: int, data: bytes = b"{}") -> None:
        self.status, self.data, self.reason, self.headers = status, data, "x", {}
        self.response = self

    def read(self, cache_content: bool = False) -> bytes:
        return self.data

    def getheaders(self) -> dict[str, str]:
        return {}


class RecordingClient:
    def __init__(self, status: int = 200) -> None:
        self.sent: list[dict[str, Any]] = []
        self.status = status

    def param_serialize(self, **request: Any) -> tuple[Any, ...]:
        self.sent.append(request)
        return (request["method"], request["resource_path"])

    def call_api(self, method: str, path: str, _request_timeout: Any = None) -> Answer:
        return Answer(self.status)


def test_a_dry_run_create_asks_the_server_for_a_dry_run() -> None:
    api = RecordingClient()
    RawResourceApi(api).create_resource_slice({"spec": {}}, dry_run="All")  # type: ignore[arg-type]
    assert api.sent[0]["query_params"] == [("dryRun", "All")]
    assert api.sent[0]["method"] == "POST"
    assert api.sent[0]["body"] == {"spec": {}}


def test_an_argument_it_does_not_know_is_refused_not_dropped() -> None:
    with pytest.raises(TypeError):
        RawResourceApi(RecordingClient()).create_resource_slice({}, pretty="true")  # type: ignore[arg-type,call-arg]


def test_the_watch_arguments_become_query_parameters() -> None:
    api = RecordingClient()
    RawResourceApi(api).list_resource_slice(  # type: ignore[arg-type]
        field_selector="spec.nodeName=n", resource_version="7", watch=True, _preload_content=False
    )
    assert api.sent[0]["query_params"] == [
        ("fieldSelector", "spec.nodeName=n"),
        ("resourceVersion", "7"),
        ("watch", True),
    ]


def test_a_non_2xx_answer_is_an_api_exception_with_its_status() -> None:
    with pytest.raises(ApiException) as raised:
        RawResourceApi(RecordingClient(404)).read_device_class("gone")  # type: ignore[arg-type]
    assert raised.value.status == 404


def test_the_cluster_adapter_names_no_generated_api_class_on_the_plugins_path() -> None:
    """Naming client.ResourceV1Api or client.EventsV1Api imports their pydantic models: ~6 MiB
    and ~0.25 s at start (raw.py). Only the fallback for clients that predate `param_serialize`
    may name one."""
    kube = Path(__file__).parents[2] / "src" / "adapters" / "cluster" / "kube"
    named = []
    for source in sorted(kube.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "client"
                and node.attr.endswith("Api")
            ):
                named.append(f"{source.name}:{node.lineno} client.{node.attr}")
    assert [n for n in named if not n.startswith("cluster.py") or "CoreV1Api" not in n] == []
    assert len(named) <= 1, named
