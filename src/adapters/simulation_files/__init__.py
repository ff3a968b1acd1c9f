"""`npu-dra simulate`'s input files: scenario and cluster-snapshot YAML/JSON decoded as strictly as
the API server decodes them, generated scenarios and the snapshot's what-ifs, into a `Scenario`.

A SimulatedNode is a fake hardware description, so decoding one builds it with the hardware
adapter's fake backends (it must build now, not halfway through the run); the scheduler itself is
pure and lives in domain/scheduling, the run in app/simulation.
"""
