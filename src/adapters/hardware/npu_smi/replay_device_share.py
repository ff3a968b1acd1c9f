"""The fake npu-smi's container-sharing mode: answers `info -t device-share` and `set -t
device-share` from a state file, as npu-smi would.

No capture of these commands exists (tests/fixtures/npu-smi); the text is npu-smi's own printf
formats (verylucky01/driver @ e29d066f, src/custom/dev_prod/user/npucli/src): the query prints
`\\t%-30s : %s` of "Device-share Status" and True/False (npu_chip_info.c); the set first asks on
stdin (npu_set_print.c show_device_share_risk), gives up unless it reads `Y` or `y` ("User
aborts", status -9016), and prints `Status : OK`, `Message : Set chip device-share successfully`
(print_result). A chip without the mode (the manifest's `device_share: false`) answers "This
device does not support querying|setting device-share." (status -9255); a set without `-d 0|1`
says so (-9001). npu-smi exits with its status: -9016, -9255, -9001 reach the shell as 200, 217,
215 (npu_smi.h, npu_smi.c main).

The state lives in `device-share-state.json` beside the manifest (chips as `card/chip`), changed
under an exclusive lock; removing it is a reboot (the mode is off after one).
"""

import contextlib
import fcntl
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

STATE_FILE = "device-share-state.json"
ABORTED, NOT_SUPPORTED, BAD_PARAMETER = 200, 217, 215
Answer = tuple[str, int]


def handles(args: Sequence[str]) -> bool:
    return list(args[:3]) in (["info", "-t", "device-share"], ["set", "-t", "device-share"])


def answer(args: Sequence[str], manifest: Mapping[str, Any], base: Path) -> Answer:
    verb, options = args[0], dict(zip(args[3::2], args[4::2], strict=False))
    if manifest.get("device_share") is False:
        doing = "querying" if verb == "info" else "setting"
        return f"This device does not support {doing} device-share.\n", NOT_SUPPORTED
    chip = f"{options.get('-i', '0')}/{options.get('-c', '0')}"
    if verb == "info":
        with _locked_state(base) as state:
            return _line("Device-share Status", str(bool(state.get(chip)))), 0
    if options.get("-d") not in ("0", "1"):
        return "Must input parameter of -d.\n", BAD_PARAMETER
    prompt = (
        "There are security risks when opening device sharing, Please ensure that only a "
        "single user uses the chip.\nAre you sure you want to continue setting?(Y/N)\n"
    )
    if options["-d"] == "1" and sys.stdin.readline().strip() not in ("Y", "y"):
        return prompt + _line("Status", "Fail") + _line(
            "Message", "User aborts chip device-share."
        ), ABORTED
    with _locked_state(base) as state:
        state[chip] = options["-d"] == "1"
    shown = prompt if options["-d"] == "1" else ""
    return shown + _line("Status", "OK") + _line("Message", "Set chip device-share successfully"), 0


def _line(key: str, value: str) -> str:
    return f"\t{key:<30} : {value}\n"


@contextlib.contextmanager
def _locked_state(base: Path) -> Iterator[dict[str, Any]]:
    path = base / STATE_FILE
    with open(base / f"{STATE_FILE}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        yield state
        path.write_text(json.dumps(state, sort_keys=True))
