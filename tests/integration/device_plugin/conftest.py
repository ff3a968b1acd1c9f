"""Fixtures: a short-pathed device-plugins directory, a fake kubelet in it, and plugins to run.

Unix socket paths must fit in 108 bytes, so directories come from /tmp, not pytest's tmp_path.
"""

import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from support.kubelet_dp import FakeKubelet  # noqa: E402

from npu_dra.adapters.grpc.device_plugin.allocate import DriverMount  # noqa: E402
from npu_dra.app.device_plugin.flags import DevicePluginConfig  # noqa: E402
from npu_dra.app.device_plugin.runtime import DevicePluginRuntime  # noqa: E402
from npu_dra.app.device_plugin.wiring import build_runtime  # noqa: E402
from npu_dra.domain.ports import HardwareProbe  # noqa: E402


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="dp-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def kubelet(short_dir: Path) -> Iterator[FakeKubelet]:
    with FakeKubelet(short_dir / "device-plugins") as fake:
        yield fake


def plugin_config(kubelet: FakeKubelet, **overrides: Any) -> DevicePluginConfig:
    values: dict[str, Any] = {
        "node_name": "node-a",
        "plugin_dir": kubelet.dir,
        "resource_names": "",
        "health_interval": 0.2,
        "cdi_enabled": False,
        "cdi_root": kubelet.dir.parent / "cdi",
        "driver_name": "npu.huawei.com",
        "device_profile": "npu",
        "hardware": "fake:unused",
        "npu_smi_path": Path("/nonexistent/npu-smi"),
        "driver_mounts": (DriverMount("/usr/local/Ascend", "/usr/local/Ascend"),),
        "log_level": "DEBUG",
    }
    return DevicePluginConfig(**(values | overrides))


PluginMaker = Callable[..., DevicePluginRuntime]


@pytest.fixture
def build_plugin(kubelet: FakeKubelet) -> Iterator[PluginMaker]:
    """Build (not start) a device plugin on `probe`; every one built is stopped at the end."""
    built: list[DevicePluginRuntime] = []

    def build(probe: HardwareProbe, **overrides: Any) -> DevicePluginRuntime:
        runtime = build_runtime(plugin_config(kubelet, **overrides), probe)
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
