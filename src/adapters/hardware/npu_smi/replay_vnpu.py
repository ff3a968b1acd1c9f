"""The fake npu-smi's vNPU table: answers `info -t template-info`, `info -t info-vnpu`,
`set -t create-vnpu` and `set -t destroy-vnpu` from a state file, as npu-smi would.

Enabled by a `vnpu:` entry in the fake's manifest (a preset name or {preset?, totals?,
templates?}, as fake hardware takes); the table lives in `vnpu-state.json` beside the manifest,
changed under an exclusive lock so concurrent calls (prepares of several claims) see one table.
Output follows the recorded captures (npu-smi 26.0.rc1, 910B4 hosts); failures print npu-smi's
`create vnpu failed.` / `destroy vnpu failed.` and exit 1.
"""

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from npu_dra.adapters.hardware.errors import ProbeError
from npu_dra.adapters.hardware.fake_vnpu import over_totals
from npu_dra.adapters.hardware.vnpu_presets import vnpu_offer_from
from npu_dra.domain.vnpu.instance import id_range
from npu_dra.domain.vnpu.templates import VnpuOffer

STATE_FILE = "vnpu-state.json"
_RESOURCES = ("aicore", "memory", "aicpu", "vpc", "venc", "vdec", "jpegd", "jpege", "pngd")
_RULE = "+" + "-" * 79 + "+"
_TEMPLATE_RULE = "+" + "-" * 90 + "+"
Answer = tuple[str, int]


def handles(args: Sequence[str]) -> bool:
    return list(args[:3]) in (
        ["info", "-t", "template-info"],
        ["info", "-t", "info-vnpu"],
        ["set", "-t", "create-vnpu"],
        ["set", "-t", "destroy-vnpu"],
    )


def answer(args: Sequence[str], manifest: Mapping[str, Any], base: Path) -> Answer:
    vnpu_offer = vnpu_offer_from(manifest["vnpu"])
    kind, options = args[2], _options(args[3:])
    if kind == "template-info":
        return render_templates(vnpu_offer), 0
    chip = f"{options.get('-i', '0')}/{options.get('-c', '0')}"
    with _locked_state(base) as state:
        vnpus: list[dict[str, Any]] = state.setdefault(chip, [])
        if kind == "info-vnpu":
            return render_info_vnpu(vnpu_offer, vnpus), 0
        try:
            if kind == "create-vnpu":
                return _create(vnpu_offer, state, chip, options), 0
            return _destroy(vnpus, options), 0
        except ProbeError as error:
            return f"{kind.replace('-', ' ')} failed.\n{error}\n", 1


def _create(
    vnpu_offer: VnpuOffer,
    state: dict[str, list[dict[str, Any]]],
    chip: str,
    options: dict[str, str],
) -> str:
    template, vnpu_id = options.get("-f", ""), int(options.get("-v", "-1"))
    vnpus = state[chip]
    physical = int(chip.partition("/")[0])  # the fake's chips: card N, chip 0, physical id N
    if vnpu_id not in id_range(physical, chip_name="910B"):
        raise ProbeError(f"vnpu id {vnpu_id} out of range")
    if any(v["id"] == vnpu_id for chip_vnpus in state.values() for v in chip_vnpus):
        raise ProbeError(f"vnpu id {vnpu_id} in use")
    over = over_totals(vnpu_offer, [*(v["template"] for v in vnpus), template])
    if over:
        raise ProbeError(f"not enough {', '.join(over)}")
    vnpus.append({"id": vnpu_id, "template": template, "vgroup": len(vnpus)})
    return (
        "\tStatus                         : OK\n"
        "\tMessage                        : Create vnpu success\n"
    )


def _destroy(vnpus: list[dict[str, Any]], options: dict[str, str]) -> str:
    vnpu_id = int(options.get("-v", "-1"))
    if not any(v["id"] == vnpu_id for v in vnpus):
        raise ProbeError(f"vnpu {vnpu_id} does not exist")
    vnpus[:] = [v for v in vnpus if v["id"] != vnpu_id]
    return (
        "\tStatus                         : OK\n"
        f"\tMessage                        : Destroy vnpu {vnpu_id} success\n"
    )


def render_templates(vnpu_offer: VnpuOffer) -> str:
    lines = [
        _TEMPLATE_RULE,
        f"|{'NPU instance template info is:':<90}|",
        f"|{'Name':<20}{'AICORE':<10}{'Memory':<10}{'AICPU':<10}{'VPC':<15}{'VENC':<15}"
        f"{'JPEGD':<10}|",
        f"|{'':<20}{'':<10}{'GB':<10}{'':<10}{'PNGD':<15}{'VDEC':<15}{'JPEGE':<10}|",
        "|" + "=" * 90 + "|",
    ]
    for t in vnpu_offer.templates:
        n = t.needs
        lines += [
            f"|{t.name:<20}{n.get('aicore', 0):<10}{n.get('memory', 0):<10}{n.get('aicpu', 0):<10}"
            f"{n.get('vpc', 0):<15}{n.get('venc', 0):<15}{n.get('jpegd', 0):<10}|",
            f"|{'':<50}{n.get('pngd', 0):<15}{n.get('vdec', 0):<15}{n.get('jpege', 0):<10}|",
            _TEMPLATE_RULE,
        ]
    return "\n".join(lines) + "\n"


def render_info_vnpu(vnpu_offer: VnpuOffer, vnpus: list[dict[str, Any]]) -> str:
    used: dict[str, int] = {}
    for v in vnpus:
        template = vnpu_offer.template(str(v["template"]))
        for key, value in (template.needs if template else {}).items():
            used[key] = used.get(key, 0) + value
    pairs = [
        f"{vnpu_offer.totals[k] - used.get(k, 0)}/{vnpu_offer.totals[k]}"
        if k in vnpu_offer.totals
        else "NA/NA"
        for k in _RESOURCES
    ]
    widths = (10, 10, 9, 7, 8, 8, 9, 9, 8)
    lines = [
        _RULE,
        f"| {'NPU resource static info as follow:':<78}|",
        f"| {'Format:Free/Total                   NA: Currently, query is not supported.':<78}|",
        f"| {'AICORE    Memory    AICPU    VPC    VENC    VDEC    JPEGD    JPEGE    PNGD':<78}|",
        f"| {'           GB':<78}|",
        "|" + "=" * 79 + "|",
        "| " + "".join(p.ljust(w) for p, w in zip(pairs, widths, strict=True)).ljust(78) + "|",
        _RULE,
        f"| {'Total number of vnpu: ' + str(len(vnpus)):<78}|",
        _RULE,
    ]
    if vnpus:
        lines += [
            "|  Vnpu ID  |  Vgroup ID     |  Container ID  |  Status  |  Template Name       |",
            _RULE,
        ]
        for v in sorted(vnpus, key=lambda v: int(v["id"])):
            lines += [
                f"|  {v['id']:<9}|  {v['vgroup']:<14}|  {'000000000000':<14}|  {0:<8}|"
                f"  {v['template']:<20}|",
                _RULE,
            ]
    return "\n".join(lines) + "\n"


def _options(rest: Sequence[str]) -> dict[str, str]:
    return {rest[i]: rest[i + 1] for i in range(0, len(rest) - 1, 2)}


@contextlib.contextmanager
def _locked_state(base: Path) -> Iterator[dict[str, list[dict[str, Any]]]]:
    path = base / STATE_FILE
    with open(base / f"{STATE_FILE}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = json.loads(path.read_text()) if path.exists() else {}
        before = json.dumps(state, sort_keys=True)
        yield state
        if json.dumps(state, sort_keys=True) != before:
            temporary = path.with_suffix(".tmp")
            temporary.write_text(json.dumps(state, indent=1))
            os.replace(temporary, path)


def state_of(base: Path) -> dict[str, list[dict[str, Any]]]:
    """The table as a test reads it: chip ("card/chip") -> its vNPUs."""
    path = base / STATE_FILE
    loaded: dict[str, list[dict[str, Any]]] = json.loads(path.read_text()) if path.exists() else {}
    return loaded
