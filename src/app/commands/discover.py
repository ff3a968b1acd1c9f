"""`npu-dra discover`: probe this node and print what it would publish, without a cluster.

An operator's first check on a new node (and a vendor's on a new backend): are the chips seen,
healthy, with the attributes, capacities, NUMA node and topology group that claims select on?
It prints every device with its health, then the ResourceSlices exactly as the kubelet plugin
would write them; unusable devices are listed but left out of the slices, as in the plugin.
`-o table` shows every device's attributes and capacities on one line.
"""

import argparse
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import yaml

from npu_dra.adapters.hardware.choose import (
    HARDWARE_CHOICES,
    check_backend,
    fake_probe,
    nvml_probe,
)
from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.npu_smi.probe import NpuSmiProbe
from npu_dra.adapters.hardware.nvml.host import NvidiaHostPaths
from npu_dra.adapters.kube_shapes.slices import slice_to_api
from npu_dra.domain.device import Device, NodeInventory
from npu_dra.domain.errors import DomainError
from npu_dra.domain.ids import DriverName, NodeName
from npu_dra.domain.pool import PCI_BUS_ID, desired_slices, published_device
from npu_dra.domain.ports import HardwareProbe
from npu_dra.domain.profile import PROFILES, profile_named

DEFAULT_NPU_SMI = "/usr/local/bin/npu-smi"
DEFAULT_HARDWARE = {"npu": "npu-smi", "gpu": "nvml"}  # each profile's real backend
PROBE_FAILED = 1
TABLE_COLUMNS: tuple[str, ...] = (
    *("NAME", "HEALTH", "PUBLISHED", "CHIP", "CARD/CHIP", "LOGIC", "NUMA", "GROUP"),
    *("MEMORY", "AICORES", "PCI BUS"),
)


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "discover",
        help="probe this node's NPUs (or GPUs) and print what it would publish",
        description=__doc__,
    )
    parser.add_argument("--node-name", help="node name (env NODE_NAME; default: this host's name)")
    parser.add_argument(
        "--device-profile",
        choices=tuple(PROFILES),
        default="npu",
        help="npu: Ascend NPUs through npu-smi (default); gpu: NVIDIA GPUs through NVML",
    )
    parser.add_argument(
        "--hardware",
        metavar="npu-smi|nvml|fake:FILE",
        help="the profile's real backend (default), or answer from a node description FILE",
    )
    parser.add_argument(
        "--driver-root",
        type=Path,
        default=Path("/"),
        metavar="DIR",
        help="gpu: root of the NVIDIA driver install (its files shown under host)",
    )
    parser.add_argument(
        "--npu-smi",
        metavar="PATH",
        help=f"npu-smi binary (env NPU_SMI_PATH; default {DEFAULT_NPU_SMI})",
    )
    parser.add_argument("--sysfs-root", type=Path, default=Path("/sys"), metavar="DIR")
    parser.add_argument("--dev-root", type=Path, default=Path("/dev"), metavar="DIR")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds for npu-smi")
    parser.add_argument("--driver-name", help="default: the profile's (npu.huawei.com, ...)")
    parser.add_argument("--output", "-o", choices=("yaml", "json", "table"), default="yaml")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    node = NodeName(args.node_name or os.environ.get("NODE_NAME") or socket.gethostname())
    try:
        inventory = hardware(args, node).probe()
        driver = args.driver_name or profile_named(args.device_profile).default_driver
        report = node_report(inventory, driver=DriverName(driver))
    except (ProbeError, DomainError, ValueError) as error:
        print(f"npu-dra discover: {' '.join(str(error).split())}", file=sys.stderr)
        return PROBE_FAILED
    if args.output == "table":
        print(table(inventory, report))
    elif args.output == "json":
        print(json.dumps(report, indent=2))
    else:
        print(yaml.safe_dump(report, sort_keys=False), end="")
    return 0


def hardware(args: argparse.Namespace, node: NodeName) -> HardwareProbe:
    chosen = args.hardware or DEFAULT_HARDWARE[args.device_profile]
    nvidia = NvidiaHostPaths(dev_root=args.dev_root, driver_root=args.driver_root)
    profile = args.device_profile
    if chosen.startswith("fake:"):
        path = Path(chosen.removeprefix("fake:"))
        return fake_probe(path, node=node, nvidia=nvidia, profile=profile)
    if chosen == "nvml":
        return nvml_probe(node=node, host=nvidia, profile=profile)
    if chosen != "npu-smi":
        raise ValueError(f"--hardware {chosen!r}: expected {HARDWARE_CHOICES}")
    check_backend(chosen, profile)
    return NpuSmiProbe(
        node=node,
        npu_smi=Path(args.npu_smi or os.environ.get("NPU_SMI_PATH") or DEFAULT_NPU_SMI),
        sysfs_root=args.sysfs_root,
        dev_root=args.dev_root,
        timeout=args.timeout,
    )


def node_report(inventory: NodeInventory, *, driver: DriverName) -> dict[str, Any]:
    """Each device's health, then the ResourceSlices as the API would store them."""
    slices = desired_slices(inventory, driver=driver, generation=1)
    return {
        "node": inventory.node,
        "driver": driver,
        "devices": [
            {"name": d.name, "health": d.health.value, "published": d.health.usable}
            for d in inventory.devices
        ],
        "host": {
            "devRoot": inventory.host.dev_root,
            "sharedDeviceNodes": sorted(inventory.host.device_nodes),
            "driverFiles": [
                {"hostPath": f.host_path, "containerPath": f.container_path}
                for f in inventory.host.driver_files
            ],
        },
        "resourceSlices": [slice_to_api(s) for s in slices],
    }


def table(inventory: NodeInventory, report: dict[str, Any]) -> str:
    rows = [TABLE_COLUMNS, *(_row(device) for device in inventory.devices)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    published = sum(len(s["spec"]["devices"]) for s in report["resourceSlices"])
    summary = f"{inventory.node}: {len(inventory.devices)} devices, {published} published"
    return "\n".join([*lines, f"{summary} in {len(report['resourceSlices'])} ResourceSlice(s)"])


def _row(device: Device) -> tuple[str, ...]:
    published = published_device(device)
    capacity = published.capacity
    return (
        device.name,
        device.health.value,
        "yes" if device.health.usable else "no",
        device.chip_name,
        f"{device.card_id}/{device.chip_id}",
        str(device.logic_id),
        _text(device.numa_node),
        _text(device.topology_group),
        capacity[profile_named(device.profile).memory_capacity].text,
        capacity["aiCores"].text if "aiCores" in capacity else "-",
        str(published.attributes.get(PCI_BUS_ID, "-")),
    )


def _text(value: object) -> str:
    return "-" if value is None else str(value)
