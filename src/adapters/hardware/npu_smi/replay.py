"""A stand-in `npu-smi` that replays recorded outputs, so the plugin runs on a node with no NPU.

Run as `fake-npu-smi <args>` or `python -m npu_dra.adapters.hardware.npu_smi.replay <args>`.
It answers from (first match wins):

* `FAKE_NPU_SMI_MANIFEST=<file.yaml>`, re-read on every call so a test can change answers
  (flip a chip's health) while the plugin runs:

      delay: 0.15                  # seconds every call sleeps (optional)
      health: {"3": Alarm, "1792/1": Critical}   # NPU id or NPU/chip -> health word in `info`
      commands:
        - args: [info]
          file: npu-smi-info_910B4_8npu.txt      # relative to the manifest
        - args: [info, -t, topo]
          stdout: "This device does not support querying topo.\\n"
          stderr: ""                # optional
          exit: 0                   # optional exit status
          delay: 3600               # optional, this command only: a hung npu-smi
          truncate: 12              # optional: keep the first 12 lines
          garbage: "#%&!"           # optional: insert this line...
          garbage_after: 7          # ...after line 7 (default: the middle)

  With `vnpu: <preset>` in the manifest, the vNPU commands answer from a live table
  (replay_vnpu.py): `info -t template-info`, `info -t info-vnpu`, `set -t create-vnpu`...
  The container-sharing mode, `info|set -t device-share`, answers from its own live state
  unless the manifest records those commands (replay_device_share.py; `device_share: false`:
  the chips have no such mode).

* `FAKE_NPU_SMI_DIR=<dir>`: the file named after the arguments joined by `_`
  (`info.txt`, `info_-m.txt`, `info_-t_topo.txt`, `info_-t_memory_-i_0.txt`).

`FAKE_NPU_SMI_DELAY` overrides `delay`; `FAKE_NPU_SMI_LOG=<file>` gets one line per call.
A recorded file's first line is dropped when it is a `# source:` header. Unknown arguments exit
with status 2, as npu-smi does for a bad parameter.
"""

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SOURCE_HEADER = "# source:"
MODULE = "npu_dra.adapters.hardware.npu_smi.replay"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    _log(args)
    try:
        manifest, answer = _lookup(args)
    except (OSError, ValueError) as error:
        print(f"fake npu-smi: {error}", file=sys.stderr)
        return 2
    env_delay = os.environ.get("FAKE_NPU_SMI_DELAY")
    time.sleep(float(answer.get("delay", env_delay or manifest.get("delay", 0))))
    stdout = _transformed(answer)
    if args == ["info"] and manifest.get("health"):
        stdout = with_health(stdout, {str(k): str(v) for k, v in manifest["health"].items()})
    sys.stdout.write(stdout)
    sys.stderr.write(str(answer.get("stderr", "")))
    return int(answer.get("exit", 0))


def _lookup(args: list[str]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    if manifest_path := os.environ.get("FAKE_NPU_SMI_MANIFEST"):
        path = Path(manifest_path)
        manifest = load_manifest(path.read_text())
        if manifest.get("vnpu") is not None:
            from npu_dra.adapters.hardware.npu_smi import replay_vnpu

            if replay_vnpu.handles(args):
                stdout, status = replay_vnpu.answer(args, manifest, path.parent)
                return manifest, {"stdout": stdout, "exit": status}
        for entry in manifest.get("commands", []):
            if [str(a) for a in entry.get("args", [])] == args:
                return manifest, _with_text(entry, path.parent)
        from npu_dra.adapters.hardware.npu_smi import replay_device_share as share

        if share.handles(args):
            stdout, status = share.answer(args, manifest, path.parent)
            return manifest, {"stdout": stdout, "exit": status}
        raise ValueError(f"{path}: no recording for `npu-smi {' '.join(args)}`")
    if directory := os.environ.get("FAKE_NPU_SMI_DIR"):
        path = Path(directory) / f"{'_'.join(args)}.txt"
        if not path.is_file():
            raise ValueError(f"no recording {path} for `npu-smi {' '.join(args)}`")
        return {}, {"stdout": recorded(path)}
    raise ValueError("set FAKE_NPU_SMI_MANIFEST or FAKE_NPU_SMI_DIR")


def load_manifest(text: str) -> dict[str, Any]:
    """JSON is tried first: it is YAML too, and spares each call PyYAML's slow import."""
    try:
        loaded = json.loads(text)
    except ValueError:
        import yaml

        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ValueError(f"manifest: {error}") from error
    if not isinstance(loaded, dict):
        raise ValueError("manifest: expected a mapping with `commands`")
    return loaded


def _with_text(entry: Mapping[str, Any], base: Path) -> dict[str, Any]:
    if "file" in entry:
        return {**entry, "stdout": recorded(base / str(entry["file"]))}
    return {**entry, "stdout": str(entry.get("stdout", ""))}


def recorded(path: Path) -> str:
    """A fixture's command output: its text without the `# source:` first line."""
    text = path.read_text()
    first, _, rest = text.partition("\n")
    return rest if first.startswith(SOURCE_HEADER) else text


def _transformed(answer: Mapping[str, Any]) -> str:
    lines = str(answer["stdout"]).splitlines(keepends=True)
    if "truncate" in answer:
        lines = lines[: int(answer["truncate"])]
    if "garbage" in answer:
        at = int(answer.get("garbage_after", len(lines) // 2))
        lines.insert(at, f"{answer['garbage']}\n")
    return "".join(lines)


def with_health(text: str, health: Mapping[str, str]) -> str:
    """`npu-smi info` text with the Health cell of the chips named in `health` replaced."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        cells = line.split("|")
        spot = next((i for i in (2, 3) if i < len(cells) - 1 and _is_health(cells[i])), None)
        if spot is None or not cells[1].split():
            continue
        card, chip = cells[1].split()[0], _chip_index(lines[number + 1 :])
        word = health.get(f"{card}/{chip}", health.get(card))
        if word is not None:
            cells[spot] = f" {word} ".ljust(len(cells[spot]))
            lines[number] = "|".join(cells)
    return "\n".join(lines)


def _is_health(cell: str) -> bool:
    from npu_dra.adapters.hardware.health_words import HEALTH_WORDS  # only when overriding

    return cell.strip() in HEALTH_WORDS


def _chip_index(following: list[str]) -> str:
    """The chip index on a chip's second row (the next table row); 950 rows have none: 0."""
    row = next((line for line in following if line.strip().startswith("|")), "")
    cells = row.split("|")
    first = next((cell for cell in cells[1:3] if cell.strip()), "") if len(cells) > 2 else ""
    tokens = first.split()
    return tokens[0] if tokens and tokens[0].isdigit() else "0"


def _log(args: list[str]) -> None:
    if log := os.environ.get("FAKE_NPU_SMI_LOG"):
        with open(log, "a", encoding="utf-8") as file:
            file.write(" ".join(args) + "\n")


def write_launcher(path: Path, *, env: Mapping[str, str]) -> Path:
    """An executable shell script at `path` running this fake with `env`: for code that needs
    an npu-smi *path* (NpuSmiProbe, `npu-dra discover --npu-smi`, a DaemonSet demo)."""
    import shlex

    exports = [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
    command = f'exec {shlex.quote(sys.executable)} -m {MODULE} "$@"'
    path.write_text("\n".join(["#!/bin/sh", *exports, command, ""]))
    path.chmod(0o755)
    return path


if __name__ == "__main__":
    sys.exit(main())
