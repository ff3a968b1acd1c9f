"""Subcommands of the npu-dra CLI; each command module exposes register(subparsers), and a
command too large for one module keeps its runner beside it (kubelet_plugin_runtime.py)."""
