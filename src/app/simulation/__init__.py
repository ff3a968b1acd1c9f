"""Offline simulation: the plugin's own code on fake hardware and an in-memory cluster."""
