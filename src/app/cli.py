"""The `npu-dra` command: one entry point, a subcommand per mode.

Each command module declares its flags from app/options/ and imports what it runs only when it
runs, so `npu-dra --help` and `npu-dra <command> --help` answer without loading gRPC, the
Kubernetes client or the CEL runtime.
"""

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from npu_dra.app.options import OptionError

# Each module exposes register(subparsers) and sets `func` on its parser.
_COMMANDS = ("simulate", "discover", "kubelet_plugin", "device_plugin")


class _Version(argparse.Action):
    """`--version`: the version and the commit (app/version.py), read only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from npu_dra.app.version import version_text

        print(version_text())  # on stdout, as `kubectl version` and `helm version` do
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npu-dra",
        description="Kubernetes DRA driver and device plugin for Huawei Ascend NPUs",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the version and the commit it was built from, and exit",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"npu_dra.app.commands.{name}").register(subparsers)
    return parser


BAD_USAGE = 2


# A reader that went away (`npu-dra discover | head`): the shell's code for SIGPIPE.
CLOSED_PIPE = 128 + 13


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        try:
            code: int = args.func(args)
        except OptionError as error:  # flags that parse alone but not together
            print(f"npu-dra {args.command}: {error}", file=sys.stderr)
            return BAD_USAGE
        sys.stdout.flush()
    except BrokenPipeError:
        return _reader_gone()
    return code


def _reader_gone() -> int:
    """Quiet, as Unix tools are when their reader exits early: what is still buffered goes to
    /dev/null, so the interpreter's own flush at exit cannot raise into a closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return CLOSED_PIPE


if __name__ == "__main__":
    sys.exit(main())
