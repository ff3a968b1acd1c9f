"""The deploy directory's objects as plain dicts, and the parts of them the tests look into."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "deploy" / "manifests"
EXAMPLES = REPO / "deploy" / "examples"
DEVICE_PLUGIN_DAEMONSET = REPO / "deploy" / "device-plugin" / "daemonset.yaml"

Obj = dict[str, Any]
Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


def load(paths: Iterable[Path]) -> list[Obj]:
    return [o for path in paths for o in yaml.safe_load_all(path.read_text()) if o]


def manifest_files() -> list[Path]:
    """In the order `kubectl apply -f deploy/manifests/` takes them (by file name)."""
    return sorted(MANIFESTS.glob("*.yaml"))


def manifests() -> list[Obj]:
    return load(manifest_files())


def key(obj: Mapping[str, Any]) -> Key:
    meta = obj["metadata"]
    return (obj["kind"], meta.get("namespace", ""), meta["name"])


def by_key(objects: Iterable[Obj]) -> dict[Key, Obj]:
    keyed: dict[Key, Obj] = {}
    for obj in objects:
        assert key(obj) not in keyed, f"{key(obj)} appears twice"
        keyed[key(obj)] = obj
    return keyed


def only(objects: Iterable[Obj], kind: str) -> Obj:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def of_kind(objects: Iterable[Obj], kind: str) -> Iterator[Obj]:
    return (o for o in objects if o["kind"] == kind)


def policy_on(objects: Iterable[Obj], resource: str) -> Obj:
    """The one ValidatingAdmissionPolicy whose rules match `resource` (resourceslices, events)."""
    (found,) = [
        o
        for o in of_kind(objects, "ValidatingAdmissionPolicy")
        if any(resource in r["resources"] for r in o["spec"]["matchConstraints"]["resourceRules"])
    ]
    return found


def binding_named_as(objects: Iterable[Obj], policy: Mapping[str, Any]) -> Obj:
    """The ValidatingAdmissionPolicyBinding of the policy's own name (the deploy's convention)."""
    (found,) = [
        o
        for o in of_kind(objects, "ValidatingAdmissionPolicyBinding")
        if o["metadata"]["name"] == policy["metadata"]["name"]
    ]
    return found


def container(daemonset: Mapping[str, Any]) -> Obj:
    (found,) = daemonset["spec"]["template"]["spec"]["containers"]
    return found  # type: ignore[no-any-return]


def expanded_argv(daemonset: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """command + args as the kubelet runs them: $(VAR) replaced from `env`."""
    spec = container(daemonset)
    argv = [*spec.get("command", []), *spec.get("args", [])]
    for name, value in env.items():
        argv = [arg.replace(f"$({name})", value) for arg in argv]
    return argv


def host_path_mounts(daemonset: Mapping[str, Any]) -> dict[str, str]:
    """mountPath -> the hostPath behind it, for the container's hostPath volumes."""
    pod = daemonset["spec"]["template"]["spec"]
    host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    return {
        m["mountPath"]: host[m["name"]]
        for m in container(daemonset)["volumeMounts"]
        if m["name"] in host
    }


def simulate_json(documents: Iterable[Obj], work: Path, *flags: str) -> Obj:
    """`npu-dra simulate -o json` over `documents` (nodes, classes, claims, pods) as one
    scenario file in `work`, with `flags` (e.g. --feature-gates); its CDI specs go to
    `work/cdi`."""
    scenario = work / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(list(documents)))
    result = subprocess.run(
        [sys.executable, "-m", "npu_dra.app.cli", "simulate", "--scenario", str(scenario),
         "--output", "json", "--cdi-out", str(work / "cdi"), *flags],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    output: Obj = json.loads(result.stdout)
    return output
