"""Session fixtures for a real Kubernetes v1.34.3 control plane, for any test folder (loaded by
``pytest_plugins`` in tests/conftest.py).

A test that uses `control_plane` (or `k8s_bin_dir`) is marked ``e2e``, and when any e2e test is
selected the binaries are built (``tests/e2e/k8s/build.sh``, cached outside the repository)
once collection is done, before any test's timeout starts, with the build's progress on the
terminal. A missing Go toolchain or a failed build fails those tests with the reason; it never
skips them.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.support.controlplane import ControlPlane, ControlPlaneError, build_binaries, stop_all

_BUILD_RESULT = pytest.StashKey[Path | str]()  # the binary directory, or why there is none


def needs_control_plane(item: pytest.Item) -> bool:
    """Uses the fixtures, or is marked e2e (e.g. a parameter that asks for them at run time)."""
    uses = "k8s_bin_dir" in getattr(item, "fixturenames", ())
    return uses or item.get_closest_marker("e2e") is not None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if needs_control_plane(item):
            item.add_marker(pytest.mark.e2e)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(needs_control_plane(item) for item in session.items):
        build_before_tests(session.config)


def build_before_tests(config: pytest.Config) -> None:
    """Builds (or finds) the binaries once per session, echoing the build on the terminal."""
    if _BUILD_RESULT in config.stash:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"[k8s build] {line}")

    config.stash[_BUILD_RESULT] = build_binaries(say)


@pytest.fixture(scope="session")
def k8s_bin_dir(request: pytest.FixtureRequest) -> Path:
    """The directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
    kubectl v1.34.3 (built by tests/e2e/k8s/build.sh if needed)."""
    build_before_tests(request.config)
    result = request.config.stash[_BUILD_RESULT]
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
