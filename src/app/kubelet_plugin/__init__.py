"""`npu-dra kubelet-plugin`: the DRA kubelet plugin process (flags, start order, shutdown)."""
