"""`npu-dra kubelet-plugin`: run the DRA kubelet plugin on this node until SIGTERM."""

import argparse

from npu_dra.app import logs
from npu_dra.app.options import add_options, settings_from


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "kubelet-plugin",
        help="serve the DRA kubelet plugin (registration, prepare/unprepare, CDI)",
        description=__doc__,
    )
    add_options(parser, "kubelet-plugin")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    logs.configure(level=settings.log_level, fmt=settings.log_format)
    from npu_dra.app.commands import kubelet_plugin_runtime as runtime
    from npu_dra.app.signals import stop_on_signals

    return runtime.run(settings, stop_on_signals())
