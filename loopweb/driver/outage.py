"""One log line when something a process talks to is lost, one when it is back: the outage logger
of the driver client (a server), the web processes (their database) and the task workers (theirs).

Standard library only, so the driver keeps it when a harness vendors ``loopweb/driver/`` alone;
the web's middleware and the worker import it from here."""

from __future__ import annotations

import logging
import threading
import time


class Outage:
    """Whether ``name`` is known to be unreachable, shared by every caller of a process that
    reaches it: the first to find it gone logs ``<name> unreachable (<reason>); <meanwhile>``
    (event ``<event>.lost``), the first to reach it again logs ``<name> reachable again after
    N s`` (event ``<event>.back``). Callers in between log nothing above ``DEBUG``."""

    def __init__(self, name: str, *, event: str, meanwhile: str, log: logging.Logger):
        self.name = name
        self.event = event
        self.meanwhile = meanwhile
        self.log = log
        self.lock = threading.Lock()
        self.since: float | None = None

    def lost(self, reason: str) -> bool:
        """Record that a caller found it unreachable; True for the first since it was last
        reached (the one that logged)."""
        with self.lock:
            first = self.since is None
            if first:
                self.since = time.monotonic()
        if first:
            self.log.warning(
                "%s unreachable (%s); %s",
                self.name,
                reason,
                self.meanwhile,
                extra={"event": f"{self.event}.lost"},
            )
        else:
            self.log.debug("%s still unreachable (%s)", self.name, reason)
        return first

    def back(self) -> float | None:
        """Record that a caller reached it; the seconds it was away when it had been lost."""
        if self.since is None:
            return None
        with self.lock:
            since, self.since = self.since, None
        if since is None:
            return None
        away = time.monotonic() - since
        self.log.warning(
            "%s reachable again after %.1f s",
            self.name,
            away,
            extra={"event": f"{self.event}.back", "seconds": round(away, 1)},
        )
        return away
