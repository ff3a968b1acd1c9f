"""Subcommands of the npu-dra CLI; each module exposes register(subparsers)."""
