"""Hardware probes: adapters of the HardwareProbe port (npu-smi on real nodes, fake for demos)."""
