"""The version this tree is (pyproject.toml's), and the image the manifests name for it; the
tests that build or tag the plugin's image use these, and tests/deploy/test_versions.py checks
that every place naming the version agrees with pyproject.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERSION: str = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
IMAGE = f"npu-dra:{VERSION}"  # deploy/manifests' image (its Kustomization's newName:newTag)
