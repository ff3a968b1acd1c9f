"""Liveness probe for the device plugin pod: each of our sockets answers the kubelet's first call.

Run as `python -m npu_dra.app.device_plugin.liveness [DIR]`; exit status 0 when every
`npu-dra-*.sock` in DIR answers GetDevicePluginOptions within the timeout. A socket missing for a
moment (the kubelet restarting) is the supervisor's job, so only sockets present are checked.
"""

import sys
from pathlib import Path

from npu_dra.adapters.grpc.device_plugin.server import answers
from npu_dra.app.options import OPTIONS

TIMEOUT_S = 3.0


def failing_sockets(plugin_dir: Path, *, timeout: float = TIMEOUT_S) -> list[Path]:
    return [p for p in sorted(plugin_dir.glob("npu-dra-*.sock")) if not answers(p, timeout=timeout)]


def main(argv: list[str]) -> int:
    failing = failing_sockets(Path(argv[0] if argv else OPTIONS["device_plugin_path"].default))
    for path in failing:
        print(f"{path}: no answer to GetDevicePluginOptions", file=sys.stderr)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
