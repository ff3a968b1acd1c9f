"""The ClusterApi port on a real API server, through the official `kubernetes` client.

The client's package and its config package are registered with their `__init__.py` deferred
(adapters/deferred_init.py), before any module here imports the client: a start imports the parts it
uses, not every loader and helper the package offers."""

from npu_dra.adapters.deferred_init import defer_package_init

defer_package_init("kubernetes")
defer_package_init("kubernetes.config")
