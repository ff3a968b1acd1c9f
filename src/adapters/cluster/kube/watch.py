"""Watching our own ResourceSlices, so that slices someone deleted come back at once.

The kubelet deletes all of a node's slices when it restarts, and wipes a driver's slices 30 s
after its endpoints disconnect; polling would leave the node's NPUs unschedulable until the next
poll. A watch with the node/driver field selector wakes the publisher instead.

It is an informer's list-then-watch (list_watch.py).
"""

from collections.abc import Callable

from kubernetes import client

from npu_dra.adapters.cluster.kube.list_watch import Document, ListWatch
from npu_dra.adapters.cluster.kube.raw import RawResourceApi


def slice_watch(
    api: client.ApiClient, *, selector: str, on_change: Callable[[], None]
) -> ListWatch:
    """`on_change` once listed (the pool may have changed while nobody watched), then on every
    added, changed or deleted slice of `selector`; `stop()` ends it."""

    def changed(_: str, __: Document) -> None:
        on_change()

    return ListWatch(
        RawResourceApi(api).list_resource_slice,
        selector=selector,
        what=f"ResourceSlices ({selector})",
        on_list=lambda _: on_change(),
        on_event=changed,
    )
