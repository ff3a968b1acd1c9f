"""The node's own part of a DRA pod's start that the driver is in, from the logs' timestamps (the
same machine clock): the kubelet's "Processing resource" line (logged at -v=3 as its DRA manager
takes up the pod's claim, before it reads the claim and calls NodePrepareResources) to containerd's
"RunPodSandbox for" line (the first thing the kubelet asks of the runtime once the claims are
prepared). The span holds the kubelet's claim read, the gRPC call and the driver's whole prepare.

The logs are read on from where the last look stopped, whole lines only."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

_KUBELET = re.compile(
    r'^I(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s+\d+ \S+\] "Processing resource" '
    r'pod="[^"/]+/([^"]+)"',
    re.MULTILINE,
)
_CONTAINERD = re.compile(
    r'^time="([^"]+)" level=\w+ msg="RunPodSandbox for &PodSandboxMetadata\{Name:([^,]+),',
    re.MULTILINE,
)
_RFC3339 = re.compile(r"(.+?)(\.\d+)?(Z|[+-]\d\d:\d\d)")


class _Tail:
    """The whole lines a log gained since the last call."""

    def __init__(self, path: Path) -> None:
        self._path, self._offset = path, 0

    def new_lines(self) -> str:
        with self._path.open("rb") as log:
            log.seek(self._offset)
            chunk = log.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._offset += len(complete)
        return complete.decode(errors="replace")


class PrepareSpans:
    """Pod name -> the span, for the pods both logs have named (each pod's first lines)."""

    def __init__(self, kubelet_log: Path, containerd_log: Path) -> None:
        self._kubelet, self._containerd = _Tail(kubelet_log), _Tail(containerd_log)
        self._processing: dict[str, float] = {}
        self._sandbox: dict[str, float] = {}

    def of(self, names: Iterable[str]) -> list[float]:
        """The spans (s) of those of `names` whose pods had a claim prepared."""
        for match in _KUBELET.finditer(self._kubelet.new_lines()):
            self._processing.setdefault(match[7], _klog_instant(match))
        for match in _CONTAINERD.finditer(self._containerd.new_lines()):
            self._sandbox.setdefault(match[2], _rfc3339_instant(match[1]))
        return [
            self._sandbox[n] - self._processing[n]
            for n in names
            if n in self._processing and n in self._sandbox
        ]


def _klog_instant(match: re.Match[str]) -> float:
    """klog's header: local time, no year (this year's)."""
    month, day, hour, minute, second = (int(match[i]) for i in range(1, 6))
    micros = int(match[6].ljust(6, "0")[:6])
    year = datetime.now().year
    return datetime(year, month, day, hour, minute, second, micros).timestamp()


def _rfc3339_instant(text: str) -> float:
    """containerd's (logrus) RFC 3339 with up to nanoseconds and its zone ("Z" or an offset)."""
    found = _RFC3339.fullmatch(text)
    if found is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    zone = "+00:00" if found[3] == "Z" else found[3]
    return datetime.fromisoformat(found[1] + zone).timestamp() + float(found[2] or 0)
