"""The collector and a long-running command's start-up heap.

Everything alive once a plugin serves (imported modules, the Kubernetes and gRPC clients, the
container and what it built) stays alive until the process ends, yet each of Python's full
collections walks all of it again: about 50,000 objects, 20 ms here, a pause that lands on
whichever kubelet call happened to allocate last. `gc.freeze()` moves them to the permanent
generation, so later collections walk only what serving created. Nothing is leaked: a frozen
object that does become garbage is still freed by reference counting (only a frozen reference
cycle waits for the process to end, and start-up built none that serving drops).
"""

import gc
import logging

log = logging.getLogger(__name__)


def freeze_startup_heap() -> None:
    """Call once, when start-up is done (the kubelet plugin: once its pool is published, so that
    this collection does not hold the GIL during the first publish)."""
    gc.collect()
    gc.freeze()
    log.debug("froze %d start-up objects out of the collector's way", gc.get_freeze_count())
