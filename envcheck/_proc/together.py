"""Calls that each wait on a child process, run at the same time in threads of their own.

``concurrent.futures`` would do it, but importing it imports ``logging`` (3 ms of a static
check whose floor is 45 ms); the probes need only "start these, wait for all, in order".
"""

from __future__ import annotations

import threading
from typing import Callable, List, Optional, Sequence, TypeVar

T = TypeVar("T")


def together(calls: Sequence[Callable[[], T]]) -> List[T]:
    """Each call's result, in order, the calls run at once (one thread each, the last in this
    one). After all have ended, the first call's exception (in order) is raised here, as
    ``ThreadPoolExecutor.map``'s results would raise it."""
    results: List[Optional[T]] = [None] * len(calls)
    errors: List[Optional[BaseException]] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # re-raised in the caller's thread below
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(calls))]
    for thread in threads[:-1]:
        thread.start()
    if calls:
        run(len(calls) - 1)
    for thread in threads[:-1]:
        thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results  # type: ignore[return-value]  # every slot is filled when none raised
