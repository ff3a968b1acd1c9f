"""The ClusterApi port on a real API server, through the official `kubernetes` client."""
