"""The API server's name rules (k8s.io/apimachinery validation, Kubernetes v1.34.3), as the
domain states them: each case is one the API server accepts or refuses."""

import pytest

from npu_dra.domain.names import (
    driver_name_problem,
    extended_resource_problem,
    node_name_problem,
    qualified_name_problem,
)


@pytest.mark.parametrize(
    "name", ["npu.huawei.com", "gpu.npu-dra.io", "a", "Npu.Huawei.com", "x" * 63, "1.2-3"]
)
def test_driver_names_the_api_server_accepts(name: str) -> None:
    # ValidateCSIDriverName lowercases before the DNS check: capitals pass, as there.
    assert driver_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "empty"),
        ("Bad_Name", "DNS subdomain"),
        ("npu..huawei.com", "DNS subdomain"),
        ("-npu.huawei.com", "DNS subdomain"),
        ("npu.huawei.com.", "DNS subdomain"),
        ("x" * 64, "63 characters"),
        ("npu huawei", "DNS subdomain"),
    ],
)
def test_driver_names_the_api_server_refuses(name: str, words: str) -> None:
    problem = driver_name_problem(name)
    assert problem is not None
    assert words in problem


def test_node_names_are_dns_subdomains_up_to_253_characters() -> None:
    assert node_name_problem("worker-1.example.com") is None
    assert node_name_problem(".".join(["a" * 63] * 4)[:253]) is None
    assert "253" in (node_name_problem("a" * 254) or "")
    assert "DNS subdomain" in (node_name_problem("Worker-1") or "")
    assert "empty" in (node_name_problem("") or "")


@pytest.mark.parametrize("name", ["huawei.com/Ascend910", "Ascend910", "a/b", "x.io/A_b.c-9"])
def test_qualified_names(name: str) -> None:
    assert qualified_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("/Ascend910", "empty prefix"),
        ("huawei.com/", "name after"),
        ("Huawei.com/x", "prefix"),
        ("huawei.com/_x", "name part"),
        ("huawei.com/" + "x" * 64, "63"),
    ],
)
def test_not_qualified_names(name: str, words: str) -> None:
    problem = qualified_name_problem(name)
    assert problem is not None
    assert words in problem


def test_extended_resource_names_need_a_prefix_outside_kubernetes_io() -> None:
    assert extended_resource_problem("huawei.com/Ascend910") is None
    assert "prefix" in (extended_resource_problem("Ascend910") or "")
    assert "reserved" in (extended_resource_problem("kubernetes.io/npu") or "")
    assert "reserved" in (extended_resource_problem("x.kubernetes.io/npu") or "")
    assert extended_resource_problem("huawei.com/Ascend 910") is not None
