"""The plugins benchmarks/pod_start.py starts on the real node, each registered with its real
kubelet: npu-dra's DRA plugin (deploy/manifests' DaemonSet flags and --claim-prefetch),
Kubernetes' DRA test driver (k8s.io/kubernetes/test/e2e/dra/test-driver v1.34.3, eight devices
`device-00`..`device-07`, CDI specs that set an env variable, written where containerd reads
them), npu-dra with vNPU templates over the fake npu-smi, and the classic device plugin; plus
the DeviceClass and the templates their pods claim from."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from kubernetes import client

from benchmarks._contenders import DEVICES, GO_BURST, GO_DRIVER, GO_QPS
from benchmarks._pod_start_clock import NAMESPACE
from tests.e2e.real_node.cluster import DRIVER, Plugin, RealCluster
from tests.e2e.seed_cluster import prefetch_access
from tests.support.controlplane import build_binaries, wait_for
from tests.support.fake_npu_smi import FakeNpuSmi, load_scenario

TEST_DRIVER_SCRIPT = Path(__file__).parent.parent / "tests/e2e/k8s/build-test-driver.sh"
NPU_TEMPLATE, GO_TEMPLATE, VNPU_TEMPLATE = "bench-one-npu", "bench-one-go", "bench-one-vnpu"
VNPU = "vir05_1c_8g"  # a quarter of a 910B4: 4 per chip
CLASSIC_RESOURCE = "huawei.com/Ascend910"
REGISTER_TIMEOUT_S = 60.0
_ATTRIBUTES = f'device.attributes["{DRIVER}"]'


def _template(name: str, device_class: str, cel: str | None = None) -> str:
    selectors = f"\n          selectors:\n          - cel:\n              expression: '{cel}'"
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
  namespace: {NAMESPACE}
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly:
          deviceClassName: {device_class}{selectors if cel else ""}
"""


CLAIM_OBJECTS = "---\n".join(
    (
        f"""\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {GO_DRIVER}
spec:
  selectors:
  - cel:
      expression: device.driver == "{GO_DRIVER}"
""",
        _template(NPU_TEMPLATE, DRIVER),
        _template(GO_TEMPLATE, GO_DRIVER),
        _template(
            VNPU_TEMPLATE,
            DRIVER,
            f'"vnpuTemplate" in {_ATTRIBUTES} && {_ATTRIBUTES}.vnpuTemplate == "{VNPU}"',
        ),
    )
)


def go_test_driver_binary() -> Path:
    """tests/e2e/k8s/build-test-driver.sh's binary (built once, minutes, then cached)."""
    found = build_binaries(
        lambda line: print(f"  [test-driver build] {line}"),
        script=TEST_DRIVER_SCRIPT,
        binaries=("dra-test-driver",),
        what="DRA test driver",
    )
    if isinstance(found, str):
        raise RuntimeError(found)
    return found / "dra-test-driver"


def published(cluster: RealCluster, driver: str) -> int:
    """How many devices `driver` lists in this node's ResourceSlices."""
    slices = client.ResourceV1Api(cluster.plane.api_client).list_resource_slice(
        field_selector=f"spec.driver={driver},spec.nodeName={cluster.node.name}"
    )
    return sum(len(s.spec.devices or []) for s in slices.items)


def _wait_serving(cluster: RealCluster, plugin: Plugin, driver: str, devices: int) -> None:
    """The kubelet registered `driver` (its log says so) and `devices` devices are published."""
    pattern = re.compile(rf'"Registered DRA plugin".*driverName="{re.escape(driver)}"')

    def serving() -> bool:
        if not plugin.running():
            raise RuntimeError(f"{plugin.name} exited:\n{plugin.tail()}")
        registered = bool(pattern.search(cluster.node.kubelet_log(4000)))
        return registered and published(cluster, driver) >= devices

    wait_for(
        serving,
        timeout=REGISTER_TIMEOUT_S,
        what=f"{driver}: registered, {devices} devices published",
        fatal=(RuntimeError,),
    )


def start_npu_dra(cluster: RealCluster) -> Plugin:
    """With --claim-prefetch, and the pod reads it needs (tests/e2e/seed_cluster.py grants what
    the chart's claimPrefetch grants)."""
    cluster.plane.kubectl("apply", "-f", "-", input=prefetch_access())
    plugin = cluster.start_plugin("dra-plugin", [*cluster.dra_argv(), "--claim-prefetch"])
    _wait_serving(cluster, plugin, DRIVER, DEVICES)
    return plugin


def start_go_driver(cluster: RealCluster, binary: Path) -> Plugin:
    """The test driver as its kubelet-plugin DaemonSet runs it, with the kubelet's directories:
    its socket goes to <plugins>/<driver>/ (it joins --datadir and the driver name itself, and
    makes only the parent: the DaemonSet mounts that directory)."""
    (cluster.plugins_dir / GO_DRIVER).mkdir(parents=True, exist_ok=True)
    argv = [
        str(binary),
        f"--kubeconfig={cluster.plane.kubeconfig}",
        f"--kube-api-qps={GO_QPS}",
        f"--kube-api-burst={GO_BURST}",
        "kubelet-plugin",
        f"--node-name={cluster.node.name}",
        f"--plugin-registration-path={cluster.registry_dir}",
        f"--datadir={cluster.plugins_dir}",
        f"--cdi-dir={cluster.node.cdi_root}",
        f"--num-devices={DEVICES}",
    ]
    plugin = cluster.start_plugin("go-test-driver", argv)
    _wait_serving(cluster, plugin, GO_DRIVER, DEVICES)
    return plugin


@contextlib.contextmanager
def vnpu_plugin(cluster: RealCluster, scratch: Path) -> Iterator[FakeNpuSmi]:
    """npu-dra with `--vnpu=templates` over the Python fake npu-smi (8 x 910B4), which makes and
    removes each vNPU's device node under the plugin's --dev-root, as the driver does."""
    smi = FakeNpuSmi(scratch / "smi", {**load_scenario("910B4_8npu"), "vnpu": "910B4"})
    smi.make_vnpu_nodes(cluster.host.dev_dir)
    argv = [a for a in cluster.dra_argv() if not a.startswith("--npu-smi=")]
    plugin = cluster.start_plugin(
        "vnpu-plugin", [*argv, f"--npu-smi={smi.path}", "--vnpu=templates"]
    )
    try:
        _wait_serving(cluster, plugin, DRIVER, DEVICES)
        wait_for(
            lambda: _vnpus_published(cluster),
            timeout=REGISTER_TIMEOUT_S,
            what=f"{VNPU} devices published",
        )
        yield smi
    finally:
        plugin.stop()
        for node in cluster.host.dev_dir.glob("vdavinci*"):
            node.unlink(missing_ok=True)


def _vnpus_published(cluster: RealCluster) -> bool:
    devices = cluster.published().values()
    return any(
        d.get("attributes", {}).get("vnpuTemplate", {}).get("string") == VNPU for d in devices
    )


def start_classic(cluster: RealCluster) -> Plugin:
    plugin = cluster.start_plugin("classic-device-plugin", cluster.device_plugin_argv())
    core = client.CoreV1Api(cluster.plane.api_client)

    def advertised() -> bool:
        node = core.read_node(cluster.node.name)
        allocatable = (node.status.allocatable if node.status else None) or {}
        return allocatable.get(CLASSIC_RESOURCE) == str(DEVICES)

    wait_for(advertised, timeout=90, what=f"{DEVICES} {CLASSIC_RESOURCE} advertised")
    return plugin
