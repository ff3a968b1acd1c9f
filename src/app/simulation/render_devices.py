"""The devices table: every device a node has, published or not, with who holds it, and the
shared counters of partitionable devices with how much of each is in use."""

from collections.abc import Iterator, Mapping
from typing import Any

from npu_dra.app.simulation.run import SimulationResult
from npu_dra.domain.device import NodeInventory
from npu_dra.domain.ids import DeviceName
from npu_dra.domain.pool import chip_layouts
from npu_dra.domain.quantity import Quantity


def _holders(result: SimulationResult) -> dict[tuple[str, str, str], str]:
    """Who holds each device: the claims allocated before the run, then the pods bound in it."""
    held = {key: f"claim {who}" for key, who in result.held_before.items()}
    for pod in result.pods:
        for claim in pod.claims:
            for r in claim.allocation.results if claim.allocation and pod.node else ():
                who = f"{pod.pod.namespace}/{pod.pod.name}"
                key = (r.driver, r.pool, r.device)
                if who not in held.get(key, "").split(","):  # two shares of one chip: once
                    held[key] = f"{held[key]},{who}" if key in held else who
    return held


def device_rows(result: SimulationResult) -> Iterator[tuple[str, ...]]:
    """Every device of every node, by node: a simulated node's NPUs published or not (unusable
    NPUs are left out of the pool, or published tainted), a snapshot's devices as published."""
    simulated = {str(i.node) for i in result.inventories}
    rows = [*_simulated_rows(result), *_published_rows(result, skip=simulated)]
    return iter(sorted(rows, key=lambda row: row[0]))  # stable: a node's rows keep their order


def _simulated_rows(result: SimulationResult) -> Iterator[tuple[str, ...]]:
    held = _holders(result)
    pools = {(s["spec"]["nodeName"], s["spec"]["driver"]) for s in result.slices}
    drivers = {node: driver for node, driver in pools}
    published = {
        (s["spec"].get("nodeName"), d["name"]): _taints(result, s["spec"], d)
        for s in result.slices
        for d in s["spec"].get("devices") or []
    }
    for inventory in sorted(result.inventories, key=lambda i: i.node):
        for d in inventory.devices:
            key = (drivers.get(inventory.node, ""), inventory.node, d.name)
            yield (
                inventory.node,
                d.name,
                d.chip_name,
                "-" if d.numa_node is None else str(d.numa_node),
                d.topology_group or "-",
                str(Quantity.of_bytes(d.memory_bytes)),
                _health(d.health.value, published.get((inventory.node, d.name)), d.health.usable),
                held.get(key, "-"),
            )
            yield from _vnpu_rows(inventory, d.name, key[0], held)


def _health(word: str, taints: str | None, usable: bool) -> str:
    """The device's health, and where it is not plainly offered, why: its taints (None: not
    published), or left out."""
    if taints is None:
        return word if usable else f"{word} (not published)"
    return f"{word} (tainted {taints})" if taints else word


def _taints(result: SimulationResult, spec: Mapping[str, Any], device: Mapping[str, Any]) -> str:
    """The device's taints as the scheduler sees them: its own, then those of the
    DeviceTaintRules that select it."""
    own = [(t["key"], t.get("value"), t["effect"]) for t in device.get("taints") or ()]
    driver, pool = str(spec.get("driver")), str((spec.get("pool") or {}).get("name"))
    ruled = [
        (r.taint.key, r.taint.value, r.taint.effect.value)
        for r in result.taint_rules
        if r.selects(driver, pool, str(device["name"]))
    ]
    return ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in own + ruled)


def _vnpu_rows(
    inventory: NodeInventory,
    chip: DeviceName,
    driver: str,
    held: Mapping[tuple[str, str, str], str],
) -> Iterator[tuple[str, ...]]:
    """A chip's vNPU devices, under it: template, share of memory, who holds it."""
    layout = chip_layouts(inventory).get(chip)
    for p in layout.vnpu_devices if layout else ():
        device = inventory.get(p.parent)
        yield (
            inventory.node,
            f"  {p.name}",
            f"{p.template.name} of {p.parent}",
            "-" if device is None or device.numa_node is None else str(device.numa_node),
            "-" if device is None else device.topology_group or "-",
            str(p.capacity()["memCapacity"]),
            "-" if device is None else device.health.value,
            held.get((driver, inventory.node, p.name), "-"),
        )


def counter_rows(result: SimulationResult) -> Iterator[tuple[str, ...]]:
    held = _holders(result)
    for s in sorted(result.slices, key=lambda s: (s["spec"].get("nodeName", ""), _name(s))):
        spec = s["spec"]
        used: dict[tuple[str, str], Quantity] = {}
        for device in spec.get("devices") or []:
            if (spec["driver"], spec["pool"]["name"], device["name"]) not in held:
                continue
            for consumed in device.get("consumesCounters") or []:
                for name, value in consumed["counters"].items():
                    key = (consumed["counterSet"], name)
                    before = used.get(key, Quantity.of_bytes(0)).value
                    used[key] = Quantity(before + Quantity.parse(value["value"]).value)
        for counter_set in spec.get("sharedCounters") or []:
            for name, value in sorted(counter_set["counters"].items()):
                taken = used.get((counter_set["name"], name))
                yield (
                    str(spec.get("nodeName", "-")),
                    counter_set["name"],
                    name,
                    str(value["value"]),
                    "0" if taken is None else taken.text,
                )


def _published_rows(result: SimulationResult, *, skip: set[str]) -> Iterator[tuple[str, ...]]:
    """A snapshot's devices as published (the nodes in `skip` are simulate's own)."""
    held = _holders(result)
    for s in sorted(result.slices, key=lambda s: (s["spec"].get("nodeName", ""), _name(s))):
        spec = s["spec"]
        if spec.get("nodeName") in skip:
            continue
        for device in spec.get("devices") or []:
            attributes: Mapping[str, Any] = device.get("attributes") or {}
            capacity: Mapping[str, Any] = device.get("capacity") or {}
            key = (spec["driver"], spec["pool"]["name"], device["name"])
            yield (
                str(spec.get("nodeName", "-")),
                device["name"],
                _value(attributes.get("chipName")),
                _value(attributes.get("numaNode")),
                _value(attributes.get("topologyGroup")),
                str((capacity.get("memCapacity") or {}).get("value", "-")),
                f"tainted {taints}" if (taints := _taints(result, spec, device)) else "Healthy",
                held.get(key, "-"),
            )


def _name(obj: Mapping[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


def _value(attribute: Mapping[str, Any] | None) -> str:
    if not attribute:
        return "-"
    return str(next(iter(attribute.values())))
