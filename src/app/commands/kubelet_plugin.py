"""`npu-dra kubelet-plugin`: run the DRA kubelet plugin on this node until SIGTERM."""

import argparse
import signal
import threading
from types import FrameType

from npu_dra.app.kubelet_plugin import logs, runtime
from npu_dra.app.kubelet_plugin.flags import Settings, add_arguments


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "kubelet-plugin",
        help="serve the DRA kubelet plugin (registration, prepare/unprepare, CDI)",
        description=__doc__,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings.from_args(args)
    logs.configure(level=settings.log_level, fmt=settings.log_format)
    stop = threading.Event()

    def on_signal(signum: int, _: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    return runtime.run(settings, stop)
