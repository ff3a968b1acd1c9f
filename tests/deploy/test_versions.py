"""One version everywhere it is written: pyproject.toml's is the chart's version and appVersion,
the image tag deploy/manifests, its Kustomization and the classic DaemonSet name, the tag the
README's Quickstart and docs/install.md build, and CHANGELOG.md's newest entry. It is semver, and
deploy/RELEASES' newest release is this version or older (a tree between releases is the next
one, not yet tagged)."""

from __future__ import annotations

import re

import yaml

from tests.deploy.objects import (
    DEVICE_PLUGIN_DAEMONSET,
    MANIFESTS,
    container,
    load,
    manifests,
    only,
)
from tests.support.releases import latest
from tests.support.version import REPO, VERSION

SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
CHART = REPO / "deploy" / "helm" / "npu-dra" / "Chart.yaml"


def numbers(version: str) -> tuple[int, ...]:
    match = SEMVER.fullmatch(version)
    assert match, f"{version!r} is not MAJOR.MINOR.PATCH"
    return tuple(int(part) for part in match.groups())


def test_the_version_is_semver() -> None:
    numbers(VERSION)


def test_the_chart_is_this_version() -> None:
    chart = yaml.safe_load(CHART.read_text())
    assert (str(chart["version"]), str(chart["appVersion"])) == (VERSION, VERSION)


def test_the_manifests_name_this_versions_image() -> None:
    assert container(only(manifests(), "DaemonSet"))["image"] == f"npu-dra:{VERSION}"
    (image,) = yaml.safe_load((MANIFESTS / "Kustomization").read_text())["images"]
    assert str(image["newTag"]) == VERSION
    classic = only(load([DEVICE_PLUGIN_DAEMONSET]), "DaemonSet")
    assert container(classic)["image"] == f"npu-dra:{VERSION}"


def test_the_docs_build_and_name_this_version() -> None:
    readme = (REPO / "README.md").read_text()
    for text in (readme, (REPO / "docs" / "install.md").read_text()):
        tags = set(re.findall(r"npu-dra:(\d[\w.+-]*?)(?:-arm64)?[\s`\"]", text))
        assert tags == {VERSION}, tags
    assert f"This README describes version {VERSION} " in readme


def test_the_changelog_starts_with_this_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text()
    entries = re.findall(r"^## (\d+\.\d+\.\d+)\b", changelog, flags=re.MULTILINE)
    assert entries[0] == VERSION
    assert f"v{entries[-1]}" == "v0.1.0"


def test_the_newest_release_is_not_newer_than_this_version() -> None:
    assert numbers(latest().tag.removeprefix("v")) <= numbers(VERSION)
