"""The Dockerfile's text, checked without building it (tests/e2e/test_image_build.py builds it):
what it copies exists and is in the build context, the entry point is the package's console
script, the base is Python 3.11 slim unless a local one is given, and the build context alone
(the files it copies) builds a wheel with the command and its data files. npu-smi and the driver
libraries are not in the image: the DaemonSets mount them from the host."""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.deploy.objects import REPO, container, manifests, only

DOCKERFILE = REPO / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, rest) per logical line, continuations joined, comments dropped."""
    lines: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line}".strip()
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        word, _, rest = pending.partition(" ")
        lines.append((word.upper(), rest.strip()))
        pending = ""
    return lines


def copy_sources() -> list[str]:
    """The build-context sources of every COPY that is not --from another stage."""
    sources: list[str] = []
    for word, rest in instructions():
        if word != "COPY" or "--from=" in rest:
            continue
        *found, _destination = [p for p in rest.split() if not p.startswith("--")]
        sources += found
    return sources


def included_by_dockerignore(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; `!` re-includes."""
    included = True
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negated = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        if fnmatch.fnmatch(path.rstrip("/"), pattern):
            included = negated
    return included


def test_every_copied_source_exists_and_is_in_the_build_context() -> None:
    sources = copy_sources()
    assert sources == ["pyproject.toml", "README.md", "src/"]
    for source in sources:
        assert (REPO / source).exists(), source
        assert included_by_dockerignore(source), source
    assert not included_by_dockerignore(".venv")
    assert not included_by_dockerignore("tests")


def test_the_entrypoint_is_the_npu_dra_console_script() -> None:
    (entrypoint,) = [rest for word, rest in instructions() if word == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["npu-dra"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["npu-dra"] == "npu_dra.app.cli:main"
    # Both DaemonSets start that command (the device plugin's probe runs `python -m`).
    assert container(only(manifests(), "DaemonSet"))["command"][0] == "npu-dra"


def test_every_stage_is_python_3_11_slim_unless_a_base_is_given() -> None:
    # ARG before the first FROM: the published default, replaced by --build-arg BASE where no
    # registry is reachable (tests/support/plugin_image.py builds the image that way).
    args = [rest for word, rest in instructions() if word == "ARG"]
    bases = [rest.split()[0] for word, rest in instructions() if word == "FROM"]
    assert args[0] == "BASE=python:3.11-slim"
    assert bases == ["${BASE}", "${BASE}"]
    assert instructions()[0] == ("ARG", "BASE=python:3.11-slim")
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires.startswith(">=3.11")


def test_no_npu_smi_or_driver_library_is_put_in_the_image() -> None:
    text = " ".join(rest for word, rest in instructions() if word in ("COPY", "ADD", "RUN"))
    assert "npu-smi" not in text
    assert "Ascend" not in text


def test_the_build_context_alone_builds_a_wheel_with_the_command(tmp_path: Path) -> None:
    # As the Dockerfile's `pip wheel .` does: an isolated build (setuptools from the index).
    context = tmp_path / "context"
    for source in copy_sources():
        origin = REPO / source
        if origin.is_dir():
            shutil.copytree(origin, context / source, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            context.mkdir(exist_ok=True)
            shutil.copy2(origin, context / source)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "--wheel-dir", str(tmp_path / "wheels"), str(context)],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "wheels").glob("npu_dra-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        assert "npu-dra = npu_dra.app.cli:main" in archive.read(entry_points).decode()
    for module in (
        "npu_dra/app/cli.py",
        "npu_dra/adapters/simulation_files/default.yaml",
        "npu_dra/app/device_plugin/liveness.py",
        "npu_dra/adapters/grpc/gen/dra/v1/api_pb2.py",
    ):
        assert module in names, module
