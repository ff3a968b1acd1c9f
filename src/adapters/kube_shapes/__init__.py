"""Kubernetes object shapes (resource.k8s.io/v1 dicts) to and from domain values.

Shared by the in-memory cluster, the real API adapter and scenario files, so all three read and
write exactly the same shapes. Errors name the field path so users can fix their YAML.
"""
