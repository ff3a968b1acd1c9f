"""A grpcio server started with its poll thread named after it.

grpcio starts one thread per server that polls its completion queue (grpc/_server.py, `_start`:
`threading.Thread(target=_serve, ...)`, grpcio 1.85), unnamed: a thread dump shows
"Thread-N (_serve)" for every server alike. It is the thread that wakes 5 times a second while
the server idles (the completion queue's poll returns every 200 ms to check for signals:
grpc/_cython/_cygrpc/completion_queue.pyx.pxi, `_INTERRUPT_CHECK_PERIOD_MS`), so it is named
`<server>-poll` here, for the count of the plugin's threads and what each costs idle.
"""

import threading
from typing import Any

GRPC_POLL_TARGET = "_serve"  # grpc/_server.py's poll loop


def start_named(server: Any, name: str) -> None:
    """`server.start()`, then its poll thread named `<name>-poll` (threads started meanwhile by
    others are told apart by their target)."""
    before = set(threading.enumerate())
    server.start()
    for thread in set(threading.enumerate()) - before:
        target = getattr(thread, "_target", None)  # threading.Thread keeps it while running
        if getattr(target, "__name__", "") == GRPC_POLL_TARGET:
            thread.name = f"{name}-poll"
