"""NVIDIA GPUs through NVML: the second vendor behind the HardwareProbe port.

Split by concern: `library` is the small seam over NVML (the calls the probe makes, as values),
`pynvml_library` its real implementation on the maintained `nvidia-ml-py` binding,
`smi_xml` a fake that replays recorded `nvidia-smi -q -x` output (or a node description), `xid`
NVIDIA's health rule, `host` the driver files and device nodes present, `probe` the adapter.
"""
