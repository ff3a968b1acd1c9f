"""Fixtures: a short-pathed device-plugins directory, a fake kubelet in it, and plugins to run.

Unix socket paths must fit in 108 bytes, so directories come from /tmp, not pytest's tmp_path.
"""

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from npu_dra.adapters.cdi.static_files import FileStaticCdiSpecs
from npu_dra.app.device_plugin.assembly import assemble
from npu_dra.app.device_plugin.registration_supervisor import DevicePluginRuntime
from npu_dra.app.options import Hardware, Settings, defaults
from npu_dra.domain.cdi import Mount
from npu_dra.domain.ports import HardwareProbe
from tests.support.kubelet_dp import FakeKubelet


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dp-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def kubelet(short_dir: Path) -> Iterator[FakeKubelet]:
    with FakeKubelet(short_dir / "device-plugins") as fake:
        yield fake


def plugin_settings(kubelet: FakeKubelet, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "node_name": "node-a",
        "device_plugin_path": kubelet.dir,
        "health_interval": 0.2,
        "cdi_root": kubelet.dir.parent / "cdi",
        "api_lock_dir": kubelet.dir.parent / "api-lock",  # not the machine's /var/lib/npu-dra
        "hardware": Hardware("fake", Path("unused")),
        "npu_smi_path": Path("/nonexistent/npu-smi"),
        "driver_mounts": (Mount("/usr/local/Ascend", "/usr/local/Ascend"),),
        "log_level": "debug",
    }
    return defaults(**(values | overrides))


PluginMaker = Callable[..., DevicePluginRuntime]


@pytest.fixture
def build_plugin(kubelet: FakeKubelet) -> Iterator[PluginMaker]:
    """Build (not start) a device plugin on `probe`; every one built is stopped at the end."""
    built: list[DevicePluginRuntime] = []

    def build(probe: HardwareProbe, **overrides: Any) -> DevicePluginRuntime:
        settings = plugin_settings(kubelet, **overrides)
        runtime = assemble(settings, probe, FileStaticCdiSpecs(settings.cdi_root))
        built.append(runtime)
        return runtime

    yield build
    for runtime in built:
        runtime.stop()  # idempotent


@pytest.fixture
def start_plugin(build_plugin: PluginMaker) -> PluginMaker:
    def start(probe: HardwareProbe, **overrides: Any) -> DevicePluginRuntime:
        runtime = build_plugin(probe, **overrides)
        runtime.start()
        return runtime

    return start
