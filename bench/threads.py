"""Threads started together (standard library only: the poller process imports no Django)."""

import threading


def together(threads: list[threading.Thread], errors: list[BaseException]) -> None:
    """Start the threads, wait for every one, then raise the first error any of them met."""
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
