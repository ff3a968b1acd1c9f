"""The DRA kubelet plugin's servers: the DRA and registration sockets, the metrics endpoint.

The process around them (flags, start order, shutdown) is `npu-dra kubelet-plugin`, in
app/commands/kubelet_plugin.py and its runner app/commands/kubelet_plugin_runtime.py, beside the
device plugin's; nothing here imports the composition root.
"""
