"""vNPU partitions: Ascend chips split from fixed templates, published as partitionable devices.

A chip that can be sliced gets a counter set (its AI cores, memory and media engines as
`npu-smi info -t info-vnpu` totals them) and, next to the whole chip, one device per template
placement it can hold, each consuming its template's counters; the whole chip consumes them all
(KEP-4815). The scheduler then never hands out a partition and its chip together.
"""
