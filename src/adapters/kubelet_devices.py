"""The chips the kubelet's device manager still holds for running pods: what a node moved from
the classic device plugin to DRA must not offer again until those pods have ended.

The kubelet records each container's device-plugin devices in its checkpoint,
`<kubelet dir>/device-plugins/kubelet_internal_checkpoint` (JSON: Data.PodDeviceEntries, each
with PodUID, ContainerName, ResourceName and DeviceIDs by NUMA node; kubelet
pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go). Entries outlive their pods: the
kubelet prunes them only when it next admits a pod through a device plugin, which on a node
moved to DRA never happens. So an entry counts only while its pod's directory,
`<kubelet dir>/pods/<pod uid>`, exists: the kubelet removes it once the pod is gone.

A device id names its chip by its trailing number: `npu-<physical id>` (this project's classic
plugin) or `Ascend910-<physical id>` (Huawei's). Resources outside `huawei.com/` are not ours.
The file is read up to MAX_BYTES; one that cannot be read or parsed holds nothing (logged
once per problem): the kubelet writes it atomically, so that means no device plugin ever ran.
"""

import json
import logging
import re
from pathlib import Path
from typing import Any

from npu_dra.adapters.atomic import read_regular

log = logging.getLogger(__name__)

CHECKPOINT = "kubelet_internal_checkpoint"
MAX_BYTES = 16 << 20
RESOURCE_PREFIX = "huawei.com/"
_CHIP = re.compile(r"-(\d{1,4})$")


class ClassicAllocations:
    def __init__(self, kubelet_dir: Path) -> None:
        self._checkpoint = kubelet_dir / "device-plugins" / CHECKPOINT
        self._pods = kubelet_dir / "pods"
        self._said: str | None = None

    def held(self) -> dict[int, str]:
        """Physical chip id -> the uid of the running pod the kubelet gave it to."""
        entries = self._entries()
        held: dict[int, str] = {}
        for entry in entries:
            if not isinstance(entry, dict) or not self._ours_and_running(entry):
                continue
            for ids in (entry.get("DeviceIDs") or {}).values():
                for device in ids if isinstance(ids, list) else []:
                    found = _CHIP.search(str(device))
                    if found:
                        held[int(found[1])] = str(entry["PodUID"])
        return held

    def _ours_and_running(self, entry: dict[str, Any]) -> bool:
        uid = str(entry.get("PodUID", ""))
        if not str(entry.get("ResourceName", "")).startswith(RESOURCE_PREFIX):
            return False
        return bool(re.fullmatch(r"[0-9a-fA-F-]{1,64}", uid)) and (self._pods / uid).is_dir()

    def _entries(self) -> list[Any]:
        try:
            raw = read_regular(self._checkpoint, limit=MAX_BYTES)
        except OSError as error:  # also a link, a FIFO or a file over MAX_BYTES
            self._say(f"{self._checkpoint}: {error}")
            return []
        if raw is None:
            return []
        try:
            data = json.loads(raw)["Data"]["PodDeviceEntries"]
        except (ValueError, KeyError, TypeError) as error:
            data = error
        if not isinstance(data, list):
            self._say(f"{self._checkpoint}: not the kubelet's checkpoint ({data!r:.80})")
            return []
        self._said = None
        return data

    def _say(self, problem: str) -> None:
        if problem != self._said:
            log.warning("classic allocations unknown, taken as none: %s", problem)
            self._said = problem
