"""The composition root: every object graph any `npu-dra` command runs is declared here, from one
`Settings` (app/options/); the factories that build each object live in app/wiring/, one module
per graph.

`Container` holds what a process shares (the cluster API, the simulation's selector evaluator);
`NodeContainer` holds what one node's plugin needs: its hardware, stores and services, and the
servers each mode runs, as Resource providers that start when first asked for and stop on
`shutdown_resources()`, dependents first (the registration socket before the DRA socket it
announces). The kubelet plugin, the device plugin and `discover` use the root's `node`; the
simulation builds one `NodeContainer` per simulated node over the root's in-memory cluster.

Every adapter is imported inside the factory that builds it, so a command loads only what it
runs: `discover` never imports gRPC or the Kubernetes client, the plugins never import the CEL
runtime, and `npu-dra --help` imports none of them.
"""

from npu_dra.app.container.node import NodeContainer
from npu_dra.app.container.root import Container, container_for, node_container

__all__ = ["Container", "NodeContainer", "container_for", "node_container"]
