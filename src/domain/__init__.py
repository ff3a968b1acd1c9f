"""The pure core of npu-dra: devices, pools, claims, allocations and what preparing them means.

Nothing in this package performs I/O; adapters feed it values and apply what it computes.
"""
