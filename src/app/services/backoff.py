"""`Backoff` for the app's services; it lives in the domain (domain/backoff.py) so that the
adapters' watches (adapters/cluster/kube/list_watch.py) share the one policy."""

from npu_dra.domain.backoff import JITTER, Backoff

__all__ = ["JITTER", "Backoff"]
