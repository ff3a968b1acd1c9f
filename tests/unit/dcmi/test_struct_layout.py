"""Every ctypes structure of the DCMI backend has the size and field offsets of the C declaration
it mirrors (tests/support/dcmi_stub/dcmi_stub.h), as the system compiler lays them out."""

import ctypes
import subprocess

import pytest

from npu_dra.adapters.hardware.dcmi.fault_structs import FAULT_STRUCTS
from npu_dra.adapters.hardware.dcmi.network_structs import NETWORK_STRUCTS
from npu_dra.adapters.hardware.dcmi.structs import STRUCTS as CHIP_STRUCTS
from npu_dra.adapters.hardware.dcmi.vdev_structs import VDEV_STRUCTS
from tests.support.dcmi_stub import SOURCE

STRUCTS = CHIP_STRUCTS | VDEV_STRUCTS | FAULT_STRUCTS | NETWORK_STRUCTS


def _program() -> str:
    lines = [
        "#include <stdio.h>",
        "#include <stddef.h>",
        '#include "dcmi_stub.h"',
        "int main(void) {",
    ]
    for name, struct in STRUCTS.items():
        lines.append(f'printf("{name} sizeof %zu\\n", sizeof(struct {name}));')
        for field, _ in struct._fields_:
            lines.append(f'printf("{name} {field} %zu\\n", offsetof(struct {name}, {field}));')
    return "\n".join([*lines, "return 0; }"])


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], int]:
    directory = tmp_path_factory.mktemp("layout")
    (directory / "layout.c").write_text(_program())
    binary = directory / "layout"
    compile_ = ["cc", "-Wall", "-Werror", "-I", str(SOURCE), "-o", str(binary)]
    subprocess.run([*compile_, str(directory / "layout.c")], check=True, timeout=120)
    printed = subprocess.run([binary], check=True, capture_output=True, text=True, timeout=30)
    rows = (line.split() for line in printed.stdout.splitlines())
    return {(struct, field): int(value) for struct, field, value in rows}


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_ctypes_structure_has_the_c_size_and_field_offsets(
    name: str, c_layout: dict[tuple[str, str], int]
) -> None:
    struct = STRUCTS[name]
    assert ctypes.sizeof(struct) == c_layout[(name, "sizeof")], f"sizeof(struct {name})"
    for field, _ in struct._fields_:
        offset = getattr(struct, field).offset
        assert offset == c_layout[(name, field)], f"offsetof(struct {name}, {field})"


def test_pcie_info_is_the_64_bytes_the_header_comment_says() -> None:
    """(The same header's "96 bytes" for dcmi_get_memory_info_stru holds on no LP64 target:
    three `unsigned long`s after an `unsigned int` make it 112 there, as the C test shows.)"""
    assert ctypes.sizeof(STRUCTS["dcmi_pcie_info_all"]) == 64


def test_the_fault_event_union_starts_after_the_type() -> None:
    """struct dcmi_event holds an enum then a union whose 8-byte member aligns it to 8."""
    assert STRUCTS["dcmi_event"].event_t.offset == 8


def test_every_declared_struct_is_checked() -> None:
    header = (SOURCE / "dcmi_stub.h").read_text()
    declared = {line.split()[1] for line in header.splitlines() if line.startswith("struct ")}
    assert declared == set(STRUCTS)
