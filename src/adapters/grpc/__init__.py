"""gRPC adapters: the kubelet-facing servers and clients.

The wire stubs live in :mod:`npu_dra.adapters.grpc.gen` (generated from ``protos/`` by
:mod:`npu_dra.adapters.grpc.codegen`; regenerate with ``make protos``).
"""
