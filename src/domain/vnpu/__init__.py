"""vNPUs: Ascend chips split from fixed templates, published as partitionable devices.

A chip that can be split gets a counter set (its AI cores, memory and media engines as
`npu-smi info -t info-vnpu` totals them) and, next to the whole chip, one device per template
placement it can hold, each consuming its template's counters; the whole chip consumes them all
(KEP-4815). The scheduler then never hands out a vNPU device and its chip together.

Leaf value types only: templates.py (a template and what a chip offers, within bounds),
vetting.py (what npu-smi offers, bad entries left out with the reason), layout.py (the devices
and counters a chip publishes), instance.py (a vNPU that exists and its record). Preparing them
is domain/prepare_vnpu.py, beside the whole-chip plan; the hardware port is domain/ports.py's
`VnpuTable`.
"""
