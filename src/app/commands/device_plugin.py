"""`npu-dra device-plugin`: serve NPUs through the kubelet's classic device plugin API.

For clusters without DRA (or nodes that must keep `huawei.com/Ascend910`-style resources), the
same inventory, health and topology logic is served as one v1beta1 device plugin per chip family.
"""

import argparse
import logging
import signal
import sys
import threading
from types import FrameType

from npu_dra.app.container import DevicePluginContainer
from npu_dra.app.device_plugin.flags import add_flags, config_from
from npu_dra.domain.errors import DomainError

log = logging.getLogger(__name__)

BAD_USAGE = 2
CANNOT_START = 1


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    parser = subparsers.add_parser(
        "device-plugin",
        help="serve NPUs as kubelet device plugin resources (v1beta1)",
        description=__doc__,
    )
    add_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT; returns the exit status."""
    try:
        config = config_from(args)
    except ValueError as error:
        print(f"npu-dra device-plugin: {error}", file=sys.stderr)
        return BAD_USAGE
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(config.log_level)  # also when the CLI configured logging first
    try:
        runtime = DevicePluginContainer(settings=config).runtime()
    except (DomainError, ValueError, OSError) as error:
        log.error("cannot start the device plugin: %s", error)
        return CANNOT_START
    stop = threading.Event()

    def on_signal(signum: int, _: FrameType | None) -> None:
        log.info("signal %d: stopping", signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    runtime.run(stop)
    return 0
