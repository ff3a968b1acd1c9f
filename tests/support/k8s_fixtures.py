"""Session fixtures for real Kubernetes control planes, v1.34.3, v1.37.2 and v1.36.3, for any test
folder (loaded by ``pytest_plugins`` in tests/conftest.py).

A test that uses `control_plane` (or `k8s_bin_dir`) is marked ``e2e`` and runs on v1.34.3. A test
marked ``k8s_version("v1.37.2")`` (or using `control_plane_v137` / `k8s_bin_dir_v137`) needs
v1.37.2 too, and likewise v1.36.3 (`control_plane_v136` / `k8s_bin_dir_v136`);
`plane_for(request, version)` gives the session's plane of a version. When any such
test is selected, v1.34.3's binaries are built (``tests/e2e/k8s/build.sh``, cached outside the
repository) once collection is done, with the build's progress on the terminal; another version
is built (or waited for, when `make test`'s background build holds its lock) when its first test
asks, outside that test's timeout (`untimed`), so the tests on v1.34.3 need not wait for it. A
missing Go toolchain or a failed build fails those tests with the reason; it never skips them.
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

from tests.support.controlplane import (
    BUILT_VERSIONS,
    CURRENT_VERSION,
    DEFAULT_VERSION,
    VERSIONS,
    ControlPlane,
    ControlPlaneError,
    build_binaries,
    stop_all,
)
from tests.support.gated_plane import gated_control_plane

V136 = "v1.36.3"
V137 = CURRENT_VERSION
# The binary directory of each version built, or why there is none.
_BUILD_RESULTS = pytest.StashKey[dict[str, Path | str]]()
# Each version's session plane, and the fixtures that need its binaries.
_PLANES = {DEFAULT_VERSION: "control_plane", V137: "control_plane_v137", V136: "control_plane_v136"}
_FIXTURES = {
    V137: ("k8s_bin_dir_v137", "control_plane_v137"),
    V136: ("k8s_bin_dir_v136", "control_plane_v136"),
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "k8s_version(version): runs on that Kubernetes version's control plane"
    )


def versions_needed(item: pytest.Item) -> tuple[str, ...]:
    """The Kubernetes versions whose binaries `item` needs (none if it needs no control plane)."""
    names = getattr(item, "fixturenames", ())
    wanted = {m.args[0] for m in item.iter_markers("k8s_version")}
    for version, fixtures in _FIXTURES.items():
        if any(name in names for name in fixtures):
            wanted.add(version)
    if "k8s_bin_dir" in names or item.get_closest_marker("e2e") is not None:
        wanted.add(DEFAULT_VERSION)
    return tuple(v for v in BUILT_VERSIONS if v in wanted)


def needs_control_plane(item: pytest.Item) -> bool:
    """Uses the fixtures, or is marked e2e (e.g. a parameter that asks for them at run time)."""
    return bool(versions_needed(item))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if needs_control_plane(item):
            item.add_marker(pytest.mark.e2e)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(DEFAULT_VERSION in versions_needed(item) for item in session.items):
        build_before_tests(session.config, DEFAULT_VERSION)


def build_before_tests(config: pytest.Config, version: str = DEFAULT_VERSION) -> None:
    """Builds (or finds) one version's binaries once per session, echoing the build."""
    results = config.stash.setdefault(_BUILD_RESULTS, {})
    if version in results:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if reporter is not None:
            reporter.write_line(f"[k8s {version} build] {line}")

    results[version] = build_binaries(say, args=(version,))


@contextlib.contextmanager
def untimed() -> Iterator[None]:
    """pytest-timeout's alarm (ITIMER_REAL, its signal method) paused: a build, or the wait for
    one, is not the time of the test that happens to need it first."""
    remaining, _interval = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if remaining > 0:
            signal.setitimer(signal.ITIMER_REAL, remaining)


def bin_dir_of(request: pytest.FixtureRequest, version: str) -> Path:
    with untimed():
        build_before_tests(request.config, version)
    result = request.config.stash[_BUILD_RESULTS][version]
    if isinstance(result, str):
        pytest.fail(result, pytrace=False)
    return result


@pytest.fixture(scope="session")
def k8s_bin_dir(request: pytest.FixtureRequest) -> Path:
    """The directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
    kubectl and kubelet v1.34.3 (built by tests/e2e/k8s/build.sh if needed)."""
    return bin_dir_of(request, DEFAULT_VERSION)


@pytest.fixture(scope="session")
def k8s_bin_dir_v137(request: pytest.FixtureRequest) -> Path:
    """The same binaries at v1.37.2 (tests/e2e/k8s/build.sh v1.37.2)."""
    return bin_dir_of(request, V137)


@pytest.fixture(scope="session")
def k8s_bin_dir_v136(request: pytest.FixtureRequest) -> Path:
    """The same binaries at v1.36.3 (tests/e2e/k8s/build.sh v1.36.3)."""
    return bin_dir_of(request, V136)


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


def _session_plane(bin_dir: Path, work_dir: Path) -> Iterator[ControlPlane]:
    plane = ControlPlane(bin_dir, work_dir)
    with _stop_control_planes_on_signals():
        try:
            plane.start()
        except ControlPlaneError as error:
            pytest.fail(f"the control plane did not start: {error}", pytrace=False)
        try:
            yield plane
        finally:
            plane.stop()


@pytest.fixture(scope="session")
def control_plane(
    k8s_bin_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """One v1.34.3 control plane for the whole session (etcd, kube-apiserver,
    kube-controller-manager, kube-scheduler on 127.0.0.1; no kubelet; default feature gates).
    Tests share it: give objects unique names."""
    yield from _session_plane(k8s_bin_dir, tmp_path_factory.mktemp("control-plane"))


@pytest.fixture(scope="session")
def control_plane_v137(
    k8s_bin_dir_v137: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """The same at v1.37.2, the current release (device taints GA, ResourceHealthStatus on)."""
    yield from _session_plane(k8s_bin_dir_v137, tmp_path_factory.mktemp("control-plane-v137"))


@pytest.fixture(scope="session")
def control_plane_v136(
    k8s_bin_dir_v136: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """The same at v1.36.3 (DRADeviceTaints and ResourceHealthStatus on by default there)."""
    yield from _session_plane(k8s_bin_dir_v136, tmp_path_factory.mktemp("control-plane-v136"))


@pytest.fixture(scope="session")
def control_plane_gated(
    k8s_bin_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """One v1.34.3 plane with the DRA gates that vNPUs, extended resources and shared chips need
    (tests/support/gated_plane.py), for every module that needs them (one per xdist worker)."""
    yield from gated_control_plane(k8s_bin_dir, tmp_path_factory)


def plane_for(request: pytest.FixtureRequest, version: str) -> ControlPlane:
    """The session's control plane of `version` (for a fixture parametrized over VERSIONS)."""
    plane = request.getfixturevalue(_PLANES[version])
    assert isinstance(plane, ControlPlane)
    return plane


def versions_params() -> list[Any]:
    """`params=` for a fixture that runs its tests on the matrix's versions (VERSIONS: the floor
    and the current release), each marked with it."""
    return [pytest.param(v, id=v, marks=pytest.mark.k8s_version(v)) for v in VERSIONS]
