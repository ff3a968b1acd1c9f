"""The `npu-dra` command: one entry point, a subcommand per mode."""

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

# Each module exposes register(subparsers) and sets `func` on its parser.
_COMMANDS = ("simulate", "discover", "kubelet_plugin", "device_plugin")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npu-dra",
        description="Kubernetes DRA driver and device plugin for Huawei Ascend NPUs",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"npu_dra.app.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
