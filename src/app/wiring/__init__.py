"""The factories the one composition root (app/container/) calls: one module per object graph.

The container declares which provider needs which; these functions build each object. Every
adapter is imported inside the factory that builds it, so a command loads only what it runs:
`discover` never imports gRPC or the Kubernetes client, the plugins never import the CEL runtime,
and `npu-dra --help` imports none of them. Nothing here runs at import.
"""
