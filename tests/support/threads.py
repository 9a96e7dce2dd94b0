"""Running work in threads against the database, as concurrent requests and workers do: each
thread has its own connection, closed when it ends so the test database can be flushed."""

import threading
from collections.abc import Callable
from typing import Any, Self

from django.db import connections, transaction
from django.db.models import Model


def together(count: int, work: Callable[[int], Any], *, timeout: float = 120) -> list:
    """Run ``work(index)`` in ``count`` threads released at the same moment; what each returned,
    or the exception it raised, in index order."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def body(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = work(index)
        except Exception as exc:  # noqa: BLE001 - the caller reads it
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "a thread never finished"
    return results


def succeeded(results: list) -> list:
    """``results`` of ``together``, failing the test with the exceptions if any was raised."""
    errors = [r for r in results if isinstance(r, Exception)]
    assert not errors, errors
    return results


class Background:
    """``work()`` running in a thread of its own; ``finished`` tells whether it returned within
    a while, ``join`` waits for it and raises what it raised."""

    def __init__(self, work: Callable[[], Any]):
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._body, args=(work,), daemon=True)
        self.thread.start()

    def _body(self, work: Callable[[], Any]) -> None:
        try:
            self.result = work()
            self.done.set()
        except BaseException as exc:  # noqa: BLE001 - raised again by join
            self.error = exc
        finally:
            connections.close_all()

    def finished(self, timeout: float) -> bool:
        """Whether the work returned within ``timeout`` seconds (an error is not returning)."""
        return self.done.wait(timeout)

    def join(self, timeout: float = 30) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the work never finished"
        if self.error is not None:
            raise self.error
        return self.result


class Race:
    """Workers racing until stopped: each ``spawn``ed thread calls ``fn(*args)`` again and
    again until ``stop`` is set, which the first error any of them raises also sets; ``join``
    stops them all and fails the test with the errors."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        def body() -> None:
            try:
                while not self.stop.is_set():
                    fn(*args)
            except BaseException as exc:  # noqa: BLE001 - reported by join
                self.errors.append(exc)
                self.stop.set()
            finally:
                connections.close_all()

        thread = threading.Thread(target=body, daemon=True)
        self.threads.append(thread)
        thread.start()

    def join(self, timeout: float = 60) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=timeout)
        assert not self.errors, self.errors


class HeldRow(threading.Thread):
    """The row of ``model`` matching ``lookup`` locked on another connection until released, so
    that whatever needs it (a worker's pass, another process) waits there, at a known point. As
    a context manager: held on entering, released on leaving."""

    def __init__(self, model: type[Model], **lookup: Any):
        super().__init__(daemon=True)
        self.model, self.lookup = model, lookup
        self.held, self.release = threading.Event(), threading.Event()

    def run(self) -> None:
        try:
            with transaction.atomic():
                self.model._default_manager.select_for_update().get(**self.lookup)
                self.held.set()
                self.release.wait(60)
        finally:
            connections.close_all()

    def __enter__(self) -> Self:
        self.start()
        assert self.held.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.join(10)
