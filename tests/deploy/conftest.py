"""Fixtures for the deploy tests: the helm CLI (built before the first test when any test here
needs it, so the build never eats a test's timeout) and the plain manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy.helm_cli import Helm, build_helm
from tests.deploy.promtool import build_promtool


def _needs_helm(item: pytest.Item) -> bool:
    return "helm" in getattr(item, "fixturenames", ())


def _needs_promtool(item: pytest.Item) -> bool:
    return "promtool" in getattr(item, "fixturenames", ())


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(_needs_helm(item) for item in session.items):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")

        def say(line: str) -> None:
            if reporter is not None:
                reporter.write_line(f"[helm build] {line}")

        build_helm(say)
    if any(_needs_promtool(item) for item in session.items):
        build_promtool()


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    """helm v3 (tests/deploy/helm/build.sh); a failed build fails the test with the reason."""
    binary = build_helm()
    if isinstance(binary, str):
        pytest.fail(binary, pytrace=False)
    return Helm(binary, tmp_path_factory.mktemp("helm-home"))


@pytest.fixture(scope="session")
def promtool() -> Path:
    """promtool (tests/deploy/promtool/build.sh); a failed build fails the test with the reason."""
    binary = build_promtool()
    if isinstance(binary, str):
        pytest.fail(binary, pytrace=False)
    return binary
