"""The ClusterApi port on a real API server, through the official `kubernetes` client.

The client's package, its config package and its utils package (kubernetes/client/rest.py
imports utils.retry; utils/__init__.py imports its YAML helpers) are registered with their
`__init__.py` deferred (adapters/deferred_init.py), before any module here imports the client:
a start imports the parts it uses, not every loader and helper the package offers."""

from npu_dra.adapters.deferred_init import defer_package_init

defer_package_init("kubernetes")
defer_package_init("kubernetes.config")
defer_package_init("kubernetes.utils")
