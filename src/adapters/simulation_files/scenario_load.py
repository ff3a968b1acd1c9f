"""Scenario files: Kubernetes-shaped YAML (SimulatedNode, DeviceClass, ResourceClaim,
ResourceClaimTemplate, Pod) checked up front, so a mistake is reported with the file, the object
and the field instead of surfacing halfway through a run. Here the file is read and each document
sorted by its kind: a file that is not a list of Kubernetes objects is refused whole; each object
is then admitted or refused alone (scenario_admit.py), as the API server does on create, its
kind's own decoding in its scenario_* module.
"""

import json
from collections.abc import Mapping
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from npu_dra.adapters.kube_shapes.reader import Fields, describe
from npu_dra.adapters.simulation_files.nesting import check_aliases, json_loads
from npu_dra.adapters.simulation_files.scenario import Refusal, Scenario, ScenarioError
from npu_dra.adapters.simulation_files.scenario_admit import Admission
from npu_dra.adapters.simulation_files.scenario_claims import (
    admin_namespaces_of,
    check_claim,
    check_class,
    check_template,
)
from npu_dra.adapters.simulation_files.scenario_nodes import simulated_node
from npu_dra.adapters.simulation_files.scenario_pod_terms import namespace_labels
from npu_dra.adapters.simulation_files.scenario_pods import sim_pod
from npu_dra.adapters.simulation_files.taint_rules import device_taint_rule

DEFAULT_DRIVER = "npu.huawei.com"  # what the built-in scenario is written for
# kubernetes.io/docs/setup/best-practices/cluster-large: "No more than 5,000 nodes", "No more
# than 150,000 total pods".
MAX_NODES = 5_000
MAX_PODS = 150_000
MAX_SCENARIO_BYTES = 512 << 20
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML was built with it
KINDS = (
    "Namespace",
    "SimulatedNode",
    "DeviceClass",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Pod",
    "DeviceTaintRule",
)
KNOWN = ", ".join(KINDS)


def load_scenario(
    path: Path | None,
    *,
    driver: str = DEFAULT_DRIVER,
    overlay: bool = False,
    npu_config_policy: bool = True,
) -> Scenario:
    """The user's scenario, or the built-in default (the seed's flow) when `path` is None, its
    class, claims and selectors naming `driver` (the one its nodes publish under; its config
    entries must be NpuConfigs). An `overlay` on a cluster's snapshot needs no SimulatedNode of
    its own. `npu_config_policy` False: the cluster has no NpuConfig policy bound
    (admission_policies.py), and config entries are not checked."""
    if path is None:
        text = (
            resources.files("npu_dra.adapters.simulation_files")
            .joinpath("default.yaml")
            .read_text()
        )
        text = text.replace(f'"{DEFAULT_DRIVER}"', f'"{driver}"')
        text = text.replace(f": {DEFAULT_DRIVER}\n", f": {driver}\n")
        return parse_scenario(text, source="built-in default scenario", driver=driver)
    documents = documents_of(read_text(path), str(path))
    checked = driver if npu_config_policy else None
    return scenario_from_documents(
        documents, source=str(path), overlay=overlay, driver=driver, checked=checked
    )


def read_text(path: Path) -> str:
    """The file's text, at most MAX_SCENARIO_BYTES of UTF-8; ScenarioError naming it if not."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SCENARIO_BYTES + 1)
    except OSError as error:
        raise ScenarioError(f"{path}: {error.strerror or error}") from error
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{path}: larger than {MAX_SCENARIO_BYTES >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioError(
            f"{path}: not UTF-8 text (byte {error.start}): expected YAML or JSON"
        ) from error


def parse_scenario(
    text: str, *, source: str, overlay: bool = False, driver: str = DEFAULT_DRIVER
) -> Scenario:
    documents = documents_of(text, source)
    return scenario_from_documents(documents, source=source, overlay=overlay, driver=driver)


def documents_of(text: str, source: str) -> list[Any]:
    """The file's documents: JSON (kubectl -o json) by the JSON parser, a hundred times faster
    than YAML's on a cluster's snapshot; otherwise YAML, of which JSON is a subset. Bounded as
    nesting.py says: depth, and how far aliases expand a document."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            found = json_loads(text, source)
            return found if isinstance(found, list) else [found]
        except json.JSONDecodeError:
            pass  # YAML flow style, not JSON
    try:
        documents = [d for d in yaml.load_all(text, Loader=LOADER) if d is not None]
    except yaml.YAMLError as error:
        raise ScenarioError(f"{source}: not valid YAML: {error}") from error
    if "*" in text:  # an alias, perhaps
        check_aliases(documents, source)
    return documents


def scenario_from_documents(
    documents: list[Any],
    *,
    source: str,
    overlay: bool = False,
    driver: str = DEFAULT_DRIVER,
    checked: str | None = "",  # whose config entries must be NpuConfigs ("": `driver`'s)
) -> Scenario:
    """The scenario of the objects the API server would create; ScenarioError for a file that
    is not a list of Kubernetes objects or holds more than a cluster supports."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {k: [] for k in KINDS}
    admission = Admission()
    for index, doc in enumerate(documents):
        kind = _kind_of(doc, source, index)
        if kind in KINDS:
            by_kind[kind].append(doc)
        else:  # kubectl goes on past a kind it cannot map; simulate models only these
            refused = Fields(doc, obj=describe(doc)).fail("kind", f"{kind!r} is not one of {KNOWN}")
            admission.refused.append(Refusal.of(doc, refused))
    _check_sizes(source, by_kind)
    if not by_kind["SimulatedNode"] and not overlay:
        raise ScenarioError(f"{source}: no SimulatedNode objects: nothing to simulate")
    return _admitted(source, by_kind, admission, driver if checked == "" else checked)


def _check_sizes(source: str, by_kind: Mapping[str, list[Mapping[str, Any]]]) -> None:
    """More nodes or pods than a Kubernetes cluster supports is refused before any is built."""
    for kind, limit in (("SimulatedNode", MAX_NODES), ("Pod", MAX_PODS)):
        if len(by_kind[kind]) > limit:
            raise ScenarioError(
                f"{source}: {len(by_kind[kind])} {kind} objects: at most {limit}, as many as "
                "one Kubernetes cluster supports"
            )


def _kind_of(doc: object, source: str, index: int) -> str:
    """The document's kind; ScenarioError for one that is not a Kubernetes object at all."""
    if not isinstance(doc, Mapping):
        raise ScenarioError(f"{source}: document {index + 1}: expected a Kubernetes object")
    kind = doc.get("kind")
    if kind == "List":
        raise ScenarioError(
            f"{source}: document {index + 1}: a List (what kubectl get -o yaml|json prints) is a "
            "cluster's snapshot, not a scenario: give it with --from (and a scenario of what-ifs "
            "with --scenario)"
        )
    if not isinstance(kind, str) or not kind:
        raise ScenarioError(
            f"{source}: document {index + 1}: field kind: {kind!r} is not one of {KNOWN}"
        )
    return kind


def _admitted(
    source: str,
    by_kind: Mapping[str, list[Mapping[str, Any]]],
    admission: Admission,
    driver: str | None,
) -> Scenario:
    """Each object as the API server would take it on create, in file order per kind; `driver`'s
    config entries as the cluster's NpuConfig admission policy takes them."""
    admit = admission.checked
    namespaces = admit(by_kind["Namespace"], lambda d: admin_namespaces_of([d]))
    admin = admin_namespaces_of(namespaces)
    nodes = admission.decoded(by_kind["SimulatedNode"], simulated_node)
    classes = admit(by_kind["DeviceClass"], partial(check_class, driver=driver))
    claims = admit(
        by_kind["ResourceClaim"], partial(check_claim, admin_namespaces=admin, driver=driver)
    )
    templates = admit(
        by_kind["ResourceClaimTemplate"],
        partial(check_template, admin_namespaces=admin, driver=driver),
    )
    pods = admission.decoded(by_kind["Pod"], sim_pod)
    rules = admission.decoded(by_kind["DeviceTaintRule"], device_taint_rule)
    return Scenario(
        source,
        tuple((name, hardware, sharing) for name, hardware, _, sharing in nodes),
        tuple(node for _, _, node, _ in nodes),
        tuple(classes),
        tuple(claims),
        tuple(templates),
        tuple(pods),
        refused=tuple(admission.refused),
        namespaces=namespace_labels(namespaces),
        taint_rules=tuple(rules),
    )
