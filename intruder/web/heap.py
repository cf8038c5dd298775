"""A served process's long-lived objects, moved out of the garbage collector's way.

Once Django, the URLconf and every view are loaded, a web process holds about 234,000
objects that Python's cyclic collector tracks (modules, classes, functions, settings, the
report libraries), none of which will ever be garbage. Every full (generation 2) collection
walks all of them: 130-390 ms on the 2-core machine, paid by whichever request happens to
trigger it. That was the untraced ~300 ms on one view per process in issue 41's page timings
(measured: a full collection takes 6 ms once they are frozen). `gc.freeze()` moves them to
a permanent generation the collector skips; before a fork it also keeps the workers from
dirtying the pages they share with the master (Python's documentation recommends it there).
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> int:
    """Import every view, collect what start-up left, and freeze the rest; return its size.

    Views are imported here, not in a participant's first request (Django loads the URLconf
    lazily); a process that calls this twice only freezes what came in between.
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - the access imports every view module
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
