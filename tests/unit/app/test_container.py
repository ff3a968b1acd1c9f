"""app/container.py: one composition root builds every mode from one Settings, imports an
adapter only when a mode asks for it, and shuts its servers down dependents first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake import FakeHardware
from npu_dra.app.container import container_for
from npu_dra.app.device_plugin.assembly import assemble
from npu_dra.app.options import Hardware, defaults
from npu_dra.domain.device_plugin_allocation import AllocateSettings, container_allocation
from npu_dra.domain.profile import NVIDIA_GPU


def described(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "node.yaml"
    path.write_text(text)
    return path


def test_fake_hardware_reads_a_description_file(tmp_path: Path) -> None:
    description = described(tmp_path, "chip: 910B4\ncount: 2\n")
    settings = defaults(hardware=Hardware("fake", description))
    probe = container_for(settings).node.hardware()
    assert isinstance(probe, FakeHardware)
    assert [d.name for d in probe.probe().devices] == ["npu-0", "npu-1"]


def test_npu_smi_hardware_is_the_npu_smi_probe_and_runs_nothing_yet() -> None:
    from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe

    assert isinstance(container_for(defaults()).node.hardware(), NpuSmiProbe)


def test_fake_hardware_on_a_test_node_reports_its_dev_root_and_npu_smi(tmp_path: Path) -> None:
    """The real-node e2e runs fake hardware over mknod-made nodes: the flags must reach it."""
    description = described(tmp_path, "chip: 910B4\ncount: 2\n")
    npu_smi = tmp_path / "npu-smi"
    npu_smi.write_text("#!/bin/sh\n")
    settings = defaults(
        hardware=Hardware("fake", description),
        dev_root=tmp_path / "dev",
        npu_smi_path=npu_smi,
        ascend_root=tmp_path / "absent",
    )
    host = container_for(settings).node.hardware().probe().host
    assert host.dev_root == str(tmp_path / "dev")
    assert [(f.host_path, f.container_path) for f in host.driver_files] == [
        (str(npu_smi), "/usr/local/bin/npu-smi")
    ]


def test_a_gpu_node_description_under_the_npu_profile_does_not_start(tmp_path: Path) -> None:
    description = described(tmp_path, "gpu: NVIDIA A100-SXM4-80GB\ncount: 2\n")
    settings = defaults(hardware=Hardware("fake", description), cluster="memory")
    with pytest.raises(ProbeError, match="--device-profile=gpu"):
        container_for(settings).node.hardware().probe()


def test_a_gpu_node_serves_nvidia_com_gpu_and_allocates_by_uuid(tmp_path: Path) -> None:
    description = described(tmp_path, "gpu: NVIDIA A100-SXM4-80GB\ncount: 2\n")
    settings = defaults(
        device_profile="gpu",
        hardware=Hardware("fake", description),
        device_plugin_path=tmp_path / "dp",
    )
    node = container_for(settings).node
    probe = node.hardware()
    [plugin] = assemble(settings, probe, node.static_cdi()).plugins
    assert plugin.resource_name == "nvidia.com/gpu"
    inventory = probe.probe()
    answer = container_allocation(
        inventory.devices, ["gpu-1"], AllocateSettings(NVIDIA_GPU, host=inventory.host)
    )
    assert dict(answer.envs)["NVIDIA_VISIBLE_DEVICES"] == inventory.devices[1].uuid
    assert [n.path for n in answer.device_nodes][:2] == ["/dev/nvidia1", "/dev/nvidiactl"]


def test_the_static_cdi_spec_is_written_through_its_port(tmp_path: Path) -> None:
    description = described(tmp_path, "chip: 910B4\ncount: 2\n")
    settings = defaults(
        hardware=Hardware("fake", description),
        cdi_enabled=True,
        cdi_root=tmp_path / "cdi",
        device_plugin_path=tmp_path / "dp",
    )
    node = container_for(settings).node
    assemble(settings, node.hardware(), node.static_cdi())
    spec = node.static_cdi().read_static(kind="k8s.npu.huawei.com/npu")
    assert spec is not None
    assert [d.name for d in spec.devices] == ["npu-0", "npu-1"]
    assert (tmp_path / "cdi" / "k8s.npu.huawei.com-npu.json").exists()


def test_shutdown_removes_the_registration_socket_before_the_dra_socket_stops(
    tmp_path: Path,
) -> None:
    description = described(tmp_path, "chip: 910B4\ncount: 2\n")
    settings = defaults(
        hardware=Hardware("fake", description),
        cluster="memory",
        registrar_dir=Path("/tmp") / f"reg-{tmp_path.name}"[-20:],
        plugins_dir=Path("/tmp") / f"plg-{tmp_path.name}"[-20:],
    )
    container = container_for(settings)
    server = container.node.plugin_server()
    dra, registration = server.paths
    assert dra.name == "dra.sock"
    assert registration.name == "npu.huawei.com-reg.sock"
    seen_at_stop: list[tuple[bool, bool]] = []
    grpc_server = server._server  # the one grpc.Server behind both sockets
    stop = grpc_server.stop

    def record(grace: float | None) -> object:
        seen_at_stop.append((dra.exists(), registration.exists()))
        return stop(grace)

    grpc_server.stop = record
    try:
        assert dra.exists()
        assert registration.exists()
    finally:
        container.shutdown_resources()
    assert seen_at_stop == [(True, False)]  # the kubelet loses the plugin, then calls stop
    assert not dra.exists()
    assert not registration.exists()


PROBE = """
import json, sys
from npu_dra.app.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("grpc", "kubernetes", "celpy", "cel_expr_python", "npu_dra.adapters.cel.evaluator",
         "npu_dra.domain.scheduling", "dependency_injector")
print(json.dumps(sorted({m.split(".")[0] if not m.startswith("npu_dra") else m
                         for m in sys.modules if m.startswith(heavy)})))
"""


@pytest.mark.parametrize("argv", [["--help"], ["simulate", "--help"], ["kubelet-plugin", "--help"]])
def test_help_imports_no_adapter_runtime(argv: list[str]) -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True
    ).stdout.splitlines()[-1]
    assert json.loads(loaded) == []


def test_discover_imports_neither_grpc_nor_the_kubernetes_client(tmp_path: Path) -> None:
    description = described(tmp_path, "chip: 910B4\ncount: 2\n")
    argv = ["discover", f"--hardware=fake:{description}", "-o", "json"]
    loaded = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True
    ).stdout.splitlines()[-1]
    modules = json.loads(loaded)
    assert "grpc" not in modules
    assert "kubernetes" not in modules
    assert "dependency_injector" in modules  # it did go through the container


def test_without_a_metrics_port_no_series_are_built_or_counted(tmp_path: Path) -> None:
    from dependency_injector import providers

    from npu_dra.app.services.metered import MeteredNodeClaims

    def never() -> None:
        raise AssertionError("Prometheus series built with no /metrics to serve them")

    settings = defaults(
        hardware=Hardware("fake", described(tmp_path, "chip: 910B4\ncount: 2\n")),
        cluster="memory",
        metrics_port=-1,
    )
    container = container_for(settings)
    container.metrics.override(providers.Callable(never))
    node = container.node
    assert not isinstance(node.metered_preparer(), MeteredNodeClaims)
    node.maintainer()
    assert node.metrics_server() is None
    node.hardware()

    counting = container_for(attrs.evolve(settings, metrics_port=0))
    assert isinstance(counting.node.metered_preparer(), MeteredNodeClaims)


NO_PORT = """
import sys
from pathlib import Path
from npu_dra.app.container import container_for
from npu_dra.app.options import Hardware, defaults
settings = defaults(hardware=Hardware("fake", Path(sys.argv[1])), cluster="memory")
node = container_for(settings).node
node.metered_preparer()
assert node.metrics_server() is None
node.shutdown_resources()
print("prometheus_client" in sys.modules)
"""


def test_without_a_metrics_port_the_prometheus_client_is_not_imported(tmp_path: Path) -> None:
    description = described(tmp_path, "chip: 910B4\ncount: 2\n")
    loaded = subprocess.run(
        [sys.executable, "-c", NO_PORT, str(description)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1]
    assert loaded == "False"


def test_the_probe_series_name_the_backend_auto_took(tmp_path: Path) -> None:
    """`--hardware auto` without libdcmi.so reads through npu-smi: the probe series say
    `npu_smi`, as discover does, not `auto`."""
    from dependency_injector import providers

    from npu_dra.adapters.metrics.memory import MemoryMetrics
    from tests.support.controlplane import wait_for
    from tests.support.fake_npu_smi import FakeNpuSmi, make_dev_root, make_sysfs

    fake = FakeNpuSmi.from_scenario("910B4_8npu", tmp_path / "npu-smi")
    settings = defaults(
        hardware=Hardware("auto"),
        npu_smi_path=fake.path,
        dev_root=make_dev_root(tmp_path / "dev", range(8)),
        sysfs_root=make_sysfs(tmp_path / "sys"),
        dcmi_dir=tmp_path / "no-dcmi",
        cluster="memory",
        metrics_port=0,
    )
    container = container_for(settings)
    recorded = MemoryMetrics()
    container.metrics.override(providers.Object(recorded))
    maintainer = container.node.maintainer()
    maintainer.start()
    try:
        maintainer.request_probe()
        wait_for(lambda: recorded.probes, timeout=30, what="a probe counted")
    finally:
        maintainer.stop()
    assert {backend for backend, _ in recorded.probes} == {"npu_smi"}
