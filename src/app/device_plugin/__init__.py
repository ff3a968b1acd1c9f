"""`npu-dra device-plugin`: the classic kubelet device plugin mode, built from the same domain.

`flags` reads the configuration, `wiring` composes the object graph from it, `health` keeps the
device lists current and `runtime` keeps every resource served and registered with the kubelet.
"""
