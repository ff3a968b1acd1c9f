"""Fixtures for the e2e tests: a real Kubernetes v1.34.3 control plane, built on first use.

Every test under tests/e2e is marked ``e2e``. When any is selected, the control-plane binaries are
built (``k8s/build.sh``, cached outside the repository; 20-40 minutes the first time on a small
machine, a moment afterwards) once collection is done, before any test's timeout starts, with the
build's progress on the terminal. A missing Go toolchain or a failed build fails the e2e tests
with the reason; it never skips them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from controlplane import BINARIES, ControlPlane, ControlPlaneError, stop_all

E2E_DIR = Path(__file__).resolve().parent
BUILD_SCRIPT = E2E_DIR / "k8s" / "build.sh"
BUILD_TIMEOUT_S = float(os.environ.get("NPU_DRA_K8S_BUILD_TIMEOUT", "7200"))

_BUILD_RESULT = pytest.StashKey[Path | str]()  # the binary directory, or why there is none


def _is_e2e(item: pytest.Item) -> bool:
    return E2E_DIR in Path(item.path).resolve().parents


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _is_e2e(item):
            item.add_marker(pytest.mark.e2e)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(item.get_closest_marker("e2e") and _is_e2e(item) for item in session.items):
        session.config.stash[_BUILD_RESULT] = _build(session.config)


def _build(config: pytest.Config) -> Path | str:
    """Runs build.sh, echoing its stderr live; returns the binary dir or an error message."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"[k8s build] {line}")

    started = time.monotonic()
    try:
        process = subprocess.Popen(
            ["bash", str(BUILD_SCRIPT)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as error:
        return f"cannot run {BUILD_SCRIPT}: {error}"
    assert process.stderr is not None
    assert process.stdout is not None
    stderr_tail: list[str] = []
    # stdout is one line (the directory), so reading stderr to its end first cannot deadlock.
    for raw in process.stderr:
        line = raw.rstrip("\n")
        stderr_tail = [*stderr_tail[-40:], line]
        say(line)
    try:
        stdout = process.stdout.read()
        code = process.wait(timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        return f"{BUILD_SCRIPT} ran over {BUILD_TIMEOUT_S:.0f}s"
    if code != 0:
        hint = ""
        if shutil.which("go") is None:
            hint = "\n`go` is not on PATH: install Go >= 1.24 (https://go.dev/dl/) to build them."
        return (
            f"building the control-plane binaries failed ({BUILD_SCRIPT} exited {code}){hint}\n"
            + "\n".join(stderr_tail)
        )
    bin_dir = Path(stdout.strip().splitlines()[-1]) if stdout.strip() else Path()
    missing = [name for name in BINARIES if not os.access(bin_dir / name, os.X_OK)]
    if missing:
        return f"{BUILD_SCRIPT} printed {bin_dir!s}, which lacks {', '.join(missing)}"
    if stderr_tail:  # something was built: say how long it took
        say(f"done in {time.monotonic() - started:.0f}s: {bin_dir}")
    return bin_dir


@pytest.fixture(scope="session")
def k8s_bin_dir(request: pytest.FixtureRequest) -> Path:
    """The directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
    kubectl v1.34.3 (built by k8s/build.sh if needed)."""
    config = request.config
    if _BUILD_RESULT not in config.stash:  # e.g. the fixture was requested from elsewhere
        config.stash[_BUILD_RESULT] = _build(config)
    result = config.stash[_BUILD_RESULT]
    if isinstance(result, str):
        pytest.fail(result, pytrace=False)
    return result


@contextlib.contextmanager
def _stop_control_planes_on_signals() -> Iterator[None]:
    """SIGTERM/SIGHUP would end Python without atexit hooks: stop the control planes first,
    then die of the signal as before. (SIGINT already unwinds through the fixtures; SIGKILL is
    covered by the children's parent-death signal.)"""
    previous: dict[int, Any] = {}

    def restore(signum: int) -> None:
        old = previous.get(signum)
        signal.signal(signum, old if old is not None else signal.SIG_DFL)

    def handler(signum: int, frame: FrameType | None) -> None:
        stop_all()
        restore(signum)
        os.kill(os.getpid(), signum)

    for signum in (int(signal.SIGTERM), int(signal.SIGHUP)):
        previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum in previous:
            restore(signum)


@pytest.fixture(scope="session")
def control_plane(
    k8s_bin_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """One control plane for the whole session (etcd, kube-apiserver, kube-controller-manager,
    kube-scheduler on 127.0.0.1; no kubelet). Tests share it: give objects unique names."""
    plane = ControlPlane(k8s_bin_dir, tmp_path_factory.mktemp("control-plane"))
    with _stop_control_planes_on_signals():
        try:
            plane.start()
        except ControlPlaneError as error:
            pytest.fail(f"the control plane did not start: {error}", pytrace=False)
        try:
            yield plane
        finally:
            plane.stop()
