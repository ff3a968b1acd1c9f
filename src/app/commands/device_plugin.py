"""`npu-dra device-plugin`: serve NPUs through the kubelet's classic device plugin API.

For clusters without DRA (or nodes that must keep `huawei.com/Ascend910`-style resources), the
same inventory, health and topology logic is served as one v1beta1 device plugin per chip family.
"""

import argparse
import logging

from npu_dra.app import logs
from npu_dra.app.options import add_options, settings_from

log = logging.getLogger(__name__)

CANNOT_START = 1


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "device-plugin",
        help="serve NPUs as kubelet device plugin resources (v1beta1)",
        description=__doc__,
    )
    add_options(parser, "device-plugin")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT; returns the exit status."""
    settings = settings_from(args)
    logs.configure(level=settings.log_level, fmt=settings.log_format)
    from npu_dra.app.container import container_for
    from npu_dra.app.heap import freeze_startup_heap
    from npu_dra.app.signals import stop_on_signals
    from npu_dra.domain.errors import DomainError

    stop = stop_on_signals()
    container = container_for(settings)
    try:
        container.node.device_plugin_metrics()  # serving the resources first
    except (DomainError, ValueError, OSError) as error:
        log.error("cannot start the device plugin: %s", error)
        container.shutdown_resources()
        return CANNOT_START
    freeze_startup_heap()
    try:
        stop.wait()
    finally:
        container.shutdown_resources()
    return 0
