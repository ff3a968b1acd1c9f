"""npu-smi adapter tests share the recorded outputs and the fake npu-smi in tests/support."""
