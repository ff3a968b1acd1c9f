"""Adapters of the ClusterApi port: an in-memory API (simulation, tests) and the real one."""
