"""`npu-smi info -t topo`: link matrix, topology groups (`ring-<n>`) and CPU affinity."""

import pytest

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.parse_topo import (
    Topology,
    parse_cpu_list,
    parse_topo,
    topology_groups,
)
from npu_dra.adapters.hardware.npu_smi.replay import recorded
from tests.support.fake_npu_smi import FIXTURES


def topo(name: str) -> Topology:
    parsed = parse_topo(recorded(FIXTURES / name))
    assert parsed is not None
    return parsed


def cpus(low: int, high: int) -> frozenset[int]:
    return frozenset(range(low, high + 1))


def test_910b3_full_hccs_mesh_is_one_group_with_numa_paired_affinity() -> None:
    topology = topo("npu-smi-info-t-topo_910B3_8npu.txt")
    assert topology.by == "logic"
    assert topology_groups(topology) == {n: "ring-0" for n in range(8)}
    pairs = [(144, 167), (96, 119), (0, 23), (48, 71)]
    assert topology.affinity == {n: cpus(*pairs[n // 2]) for n in range(8)}
    assert topology.links[3] == {n: "X" if n == 3 else "HCCS" for n in range(8)}


def test_910b1_older_header_without_leading_tab() -> None:
    topology = topo("npu-smi-info-t-topo_910B1_8npu.txt")
    assert topology_groups(topology) == {n: "ring-0" for n in range(8)}
    assert topology.affinity[4] == cpus(96, 119)
    assert topology.affinity[5] == cpus(48, 71)


def test_910a_a_plus_x_is_two_rings_of_four() -> None:
    groups = topology_groups(topo("npu-smi-info-t-topo_910A_8npu_synthetic.txt"))
    assert groups == {n: f"ring-{n // 4}" for n in range(8)}


def test_a3_groups_are_sio_pairs_keyed_by_physical_id() -> None:
    topology = topo("npu-smi-info-t-topo_Ascend910-A3_16npu_synthetic.txt")
    assert topology.by == "physical"
    assert topology.affinity == {}
    assert topology_groups(topology) == {p: f"ring-{p // 2}" for p in range(16)}


def test_950_pcie_only_host_has_no_groups_but_split_affinity() -> None:
    topology = topo("npu-smi-info-t-topo_Ascend950_pcie-sys_doc.txt")
    assert topology_groups(topology) == {}
    low = cpus(0, 63) | cpus(128, 191)
    high = cpus(64, 127) | cpus(192, 255)
    assert topology.affinity == {n: low if n < 4 else high for n in range(8)}


def test_unsupported_query_is_no_topology() -> None:
    assert parse_topo("This device does not support querying topo.\n") is None


def test_nic_columns_and_rows_of_newer_npu_smi_are_skipped() -> None:
    text = (
        "\t   NPU0       NPU1       NIC0       CPU Affinity\n"
        "NPU0       X          HCCS       PIX        0-23\n"
        "NPU1       HCCS       X          PXB        24-47\n"
        "NIC0       PIX        PXB        X\n\nNIC0: mlx5_0\n\nLegend:\n  X = Self\n"
    )
    topology = parse_topo(text)
    assert topology is not None
    assert topology.links == {0: {0: "X", 1: "HCCS"}, 1: {0: "HCCS", 1: "X"}}
    assert topology_groups(topology) == {0: "ring-0", 1: "ring-0"}


HEAD = "\t   NPU0       NPU1       CPU Affinity\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty output"),
        ("garbage\n", "line 1: 'garbage' is not an NPU<n> or Phy-ID<n> label"),
        (HEAD + "NPU0 X HCCS 0-23\n", "2 columns but 1 rows"),
        (HEAD + "NPU0 X HCCS 0-23\nNPU0 HCCS X 0-23\n", "line 3: NPU0 is not a column"),
        (HEAD + "NPU0 X WARP 0-23\n", "line 2: unknown link type 'WARP'"),
        (HEAD + "NPU0 HCCS X 0-23\n", "line 2: NPU0 is not linked to itself with X"),
        (HEAD + "NPU0 X HCCS 23-0\n", "line 2: '23-0' is not a CPU list"),
        (HEAD + "NPU0 X HCCS\n", "line 2: expected 3 cells"),
        (HEAD + "NPU7 X HCCS 0-1\n", "line 2: NPU7 is not a column"),
    ],
)
def test_malformed_topology_is_an_error_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(ProbeError, match=r"^`npu-smi info -t topo`") as raised:
        parse_topo(text)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0-3", frozenset({0, 1, 2, 3})),
        ("0-1,8,10-11", frozenset({0, 1, 8, 10, 11})),
        ("5", frozenset({5})),
        ("", None),
        ("3-1", None),
        ("a-b", None),
        ("0-99999999", None),
    ],
)
def test_cpu_lists(text: str, expected: frozenset[int] | None) -> None:
    assert parse_cpu_list(text) == expected
