"""Real hardware discovery: the HardwareProbe adapter that reads `npu-smi` on an Ascend node.

Split by concern: `runner` runs npu-smi, one `parse_*` module per command reads its output,
`sysfs` answers NUMA questions, `join` combines the replies into devices, `probe` orchestrates.
`replay` is a stand-in npu-smi that replays recorded outputs, so all of it runs without an NPU.
"""
