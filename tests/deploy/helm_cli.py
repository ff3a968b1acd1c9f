"""The helm CLI for the deploy tests, built once from Helm's own Go module (helm/build.sh, cached
outside the repository), and helpers to render the chart into plain objects.

Helm gets its own throwaway config, cache and data directories and no kubeconfig: `lint` and
`template` need no cluster, and nothing of the user's helm set-up leaks in or out.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "npu-dra"
BUILD_SCRIPT = Path(__file__).resolve().parent / "helm" / "build.sh"
BUILD_TIMEOUT_S = float(os.environ.get("NPU_DRA_HELM_BUILD_TIMEOUT", "1800"))
# Labels only Helm adds (release bookkeeping); the plain manifests have none of them.
HELM_LABELS = frozenset(
    {
        "helm.sh/chart",
        "app.kubernetes.io/managed-by",
        "app.kubernetes.io/instance",
        "app.kubernetes.io/version",
    }
)


class HelmError(RuntimeError):
    """helm exited non-zero; the message has its stderr."""


_built: list[Path | str] = []  # the one result of this process's build


def build_helm(say: Callable[[str], None] = lambda _line: None) -> Path | str:
    """Runs build.sh once per process (a moment when cached; minutes the first time), passing
    its progress lines to `say`; returns the helm binary, or why there is none."""
    if not _built:
        _built.append(_build(say))
    return _built[0]


def _build(say: Callable[[str], None]) -> Path | str:
    started = time.monotonic()
    try:
        result = subprocess.run(
            ["bash", str(BUILD_SCRIPT)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{BUILD_SCRIPT} ran over {BUILD_TIMEOUT_S:.0f}s"
    except OSError as error:
        return f"cannot run {BUILD_SCRIPT}: {error}"
    for line in result.stderr.splitlines():
        say(line)
    if result.returncode != 0:
        return f"building helm failed ({BUILD_SCRIPT} exited {result.returncode}):\n{result.stderr}"
    binary = Path(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else Path()
    if not os.access(binary, os.X_OK):
        return f"{BUILD_SCRIPT} printed {binary!s}, which is not an executable"
    if result.stderr:
        say(f"done in {time.monotonic() - started:.0f}s: {binary}")
    return binary


class Helm:
    def __init__(self, binary: Path, home: Path) -> None:
        self.binary = binary
        self._home = home

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self._home),
            "HELM_CONFIG_HOME": str(self._home / "config"),
            "HELM_CACHE_HOME": str(self._home / "cache"),
            "HELM_DATA_HOME": str(self._home / "data"),
            "KUBECONFIG": os.devnull,
        }
        result = subprocess.run(
            [str(self.binary), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        if check and result.returncode != 0:
            raise HelmError(f"helm {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
        return result

    def template_text(
        self,
        *,
        release: str = "npu-dra",
        namespace: str | None = None,
        values: Mapping[str, Any] | None = None,
        set_values: Iterable[str] = (),
        chart: Path = CHART,
    ) -> str:
        """`helm template` of the chart (or a copy of it at `chart`); `values` go in as a values
        file, `set_values` as --set."""
        args = ["template", release, str(chart)]
        if namespace:
            args += ["--namespace", namespace]
        if values:
            values_file = self._home / f"values-{time.monotonic_ns()}.yaml"
            values_file.write_text(yaml.safe_dump(dict(values)))
            args += ["--values", str(values_file)]
        for item in set_values:
            args += ["--set", item]
        return self.run(*args).stdout

    def template(self, **kwargs: Any) -> list[dict[str, Any]]:
        return [o for o in yaml.safe_load_all(self.template_text(**kwargs)) if o]


def without_helm_labels(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` without the labels only Helm adds."""
    copy: dict[str, Any] = yaml.safe_load(yaml.safe_dump(dict(obj)))
    labels = copy["metadata"].get("labels") or {}
    for key in HELM_LABELS:
        labels.pop(key, None)
    return copy
