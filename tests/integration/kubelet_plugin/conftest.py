"""Fixtures: a short temp dir (socket paths stay under 108 bytes) and a started plugin."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_node import Node, plugin_settings, start_node


@pytest.fixture
def scratch() -> Iterator[Path]:
    """Short, so socket paths stay well under the 108-byte limit."""
    path = Path(tempfile.mkdtemp(prefix="npd-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def node(scratch: Path) -> Iterator[Node]:
    started = start_node(plugin_settings(scratch))
    yield started
    started.plugin.stop()
