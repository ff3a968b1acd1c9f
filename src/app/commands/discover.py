"""`npu-dra discover`: probe this node and print what it would publish, without a cluster.

An operator's first check on a new node (and a vendor's on a new backend): are the chips seen,
healthy, with the attributes, capacities, NUMA node and topology group that claims select on?
It prints every device with its health, then the ResourceSlices exactly as the kubelet plugin
would write them; unusable devices are listed but left out of the slices, as in the plugin.
`-o table` shows every device's attributes and capacities on one line.
"""

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from npu_dra.app import logs
from npu_dra.app.options import add_options, settings_from

if TYPE_CHECKING:
    from npu_dra.domain.device import Device, NodeInventory

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
    add_options(parser, "discover")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    logs.configure(level=settings.log_level, fmt=settings.log_format)
    from npu_dra.adapters.hardware.choose import backend_of
    from npu_dra.adapters.hardware.errors import ProbeError
    from npu_dra.app.container import container_for
    from npu_dra.domain.errors import DomainError
    from npu_dra.domain.ids import DriverName

    try:
        hardware = container_for(settings).node.hardware()
        inventory = hardware.probe()
        driver = DriverName(settings.driver_name)
        report = node_report(inventory, driver=driver, backend=backend_of(hardware))
    except (ProbeError, DomainError, ValueError) as error:
        print(f"npu-dra discover: {' '.join(str(error).split())}", file=sys.stderr)
        return PROBE_FAILED
    output = settings.output or "yaml"
    if output == "table":
        print(table(inventory, report), f"read through {report['backend']}", end="")
        print(f" (--hardware {settings.hardware.kind})")
    elif output == "json":
        print(json.dumps(report, indent=2))
    else:
        import yaml

        print(yaml.safe_dump(report, sort_keys=False), end="")
    return 0


def node_report(inventory: "NodeInventory", *, driver: str, backend: str) -> dict[str, Any]:
    """The backend read through, each device's health, then the ResourceSlices as the API
    would store them."""
    from npu_dra.adapters.kube_shapes.slices import slice_to_api
    from npu_dra.domain.ids import DriverName
    from npu_dra.domain.pool import desired_slices

    slices = desired_slices(inventory, driver=DriverName(driver), generation=1)
    return {
        "node": inventory.node,
        "driver": driver,
        "backend": backend,
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


def table(inventory: "NodeInventory", report: dict[str, Any]) -> str:
    rows = [TABLE_COLUMNS, *(_row(device) for device in inventory.devices)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    published = sum(len(s["spec"]["devices"]) for s in report["resourceSlices"])
    summary = f"{inventory.node}: {len(inventory.devices)} devices, {published} published"
    return "\n".join([*lines, f"{summary} in {len(report['resourceSlices'])} ResourceSlice(s),"])


def _row(device: "Device") -> tuple[str, ...]:
    from npu_dra.domain.pool import PCI_BUS_ID, published_device
    from npu_dra.domain.profile import profile_named

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
