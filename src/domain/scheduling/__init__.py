"""Scheduler emulation for `npu-dra simulate`: kube-scheduler's DRA allocator and node filters.

This wing is not production code: in a cluster the real kube-scheduler allocates. It lives apart
so the plugin wings (kubelet plugin, device plugin, services) cannot come to depend on it; an
import-linter contract in pyproject.toml holds that line.
"""
