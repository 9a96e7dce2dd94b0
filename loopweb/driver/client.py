"""The driver protocol over HTTP (API.md, "Jobs, runs and drivers").

    driver = Driver("http://127.0.0.1:8000", token)
    driver.serve(execute)   # execute(job) -> RunResult, or raises Failure

Every call is retried on connection errors, 5xx and 429 with backoff. A push is safe to retry:
the server treats a second push for a job that has its run as a re-push of that run.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("loopweb.driver")

FAILURES = {
    "catastrophic",
    "timedOut",
    "harnessError",
    "limitExceeded",
    "hung",
    "infrastructure",
    "canceled",
}


class DriverError(Exception):
    """The server refused a call (4xx other than 429), or kept failing past the retries."""

    def __init__(self, message: str, status: int | None = None, body: Any = None):
        super().__init__(message)
        self.status = status
        self.body = body


class Failure(Exception):  # noqa: N818 - it reads as what it reports: the attempt's failure
    """Raise from ``execute`` to end the attempt with no run, e.g. ``Failure("infrastructure")``.

    ``infrastructure``, ``catastrophic``, ``harnessError`` and ``hung`` are retried by the
    server while the job's retries last.
    """

    def __init__(self, failure: str = "infrastructure", detail: str = ""):
        if failure not in FAILURES:
            raise ValueError(f"unknown failure {failure!r}; one of {sorted(FAILURES)}")
        super().__init__(detail or failure)
        self.failure = failure
        self.detail = detail


@dataclass
class RunResult:
    """What ``execute`` returns: the run to push for the job."""

    outcome: str = "completed"
    record: dict = field(default_factory=dict)
    finished_at: dt.datetime | None = None
    commit: str = ""
    merge_artifact: str = ""
    signals: list[dict] | None = None


@dataclass
class Job:
    """A claimed job: its id, cell, attempt and combination, as the server sent them."""

    data: dict
    cancelled: threading.Event = field(default_factory=threading.Event)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    @property
    def id(self) -> int:
        return self.data["id"]


class Driver:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        poll_interval: float = 2.0,
        heartbeat: float = 30.0,
        timeout: float = 30.0,
        retries: int = 6,
        backoff: float = 0.5,
    ):
        self.url = url.rstrip("/")
        self.token = token
        self.poll_interval = poll_interval
        self.heartbeat = heartbeat
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    # HTTP -------------------------------------------------------------------------------------

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body, default=_json_default).encode()
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        delay = self.backoff
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(  # noqa: S310 - the URL is the operator's server
                f"{self.url}{path}", data=data, headers=headers, method=method
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                    raw = response.read()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as exc:
                payload = _read_json(exc)
                if exc.code < 500 and exc.code != 429:
                    raise DriverError(
                        f"{method} {path}: {exc.code} {payload}", exc.code, payload
                    ) from exc
                error = DriverError(f"{method} {path}: {exc.code}", exc.code, payload)
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
                error = DriverError(f"{method} {path}: {exc}")
            if attempt == self.retries:
                raise error
            log.warning("%s; retrying in %.1fs", error, delay)
            time.sleep(delay)
            delay = min(delay * 2, 30)
        raise AssertionError("unreachable")

    # The protocol -----------------------------------------------------------------------------

    def claim(self, max_jobs: int = 1) -> list[Job]:
        return [Job(data) for data in self.call("POST", "/api/driver/claim", {"max": max_jobs})]

    def report(self, job: Job, status: str) -> bool:
        """Report a status (and renew the lease); True when the job was cancelled."""
        reply = self.call("POST", f"/api/driver/jobs/{job.id}/status", {"status": status})
        if reply and reply.get("cancel"):
            job.cancelled.set()
            return True
        return False

    def fail(self, job: Job, failure: str, detail: str = "") -> dict:
        return self.call(
            "POST", f"/api/driver/jobs/{job.id}/fail", {"failure": failure, "detail": detail}
        )

    def push(self, job: Job, result: RunResult) -> dict:
        body = {
            "job": job.id,
            "outcome": result.outcome,
            "record": result.record,
            "finishedAt": result.finished_at or dt.datetime.now(dt.UTC),
            "commit": result.commit,
            "mergeArtifact": result.merge_artifact,
        }
        if result.signals:
            body["signals"] = result.signals
        return self.call("POST", "/api/runs/", body)

    # Serving ----------------------------------------------------------------------------------

    def run_one(self, job: Job, execute: Callable[[Job], RunResult | dict]) -> str:
        """Execute one claimed job through to its push or failure; returns what happened."""
        for status in ("dispatched", "starting", "running"):
            if self.report(job, status):
                return "cancelled"
        stop_beating = threading.Event()
        beat = threading.Thread(target=self._beat, args=(job, stop_beating), daemon=True)
        beat.start()
        try:
            result = execute(job)
        except Failure as failure:
            outcome = ("failed", failure.failure, failure.detail)
        except Exception as exc:  # noqa: BLE001 - the driver's own crash is an infrastructure failure
            log.exception("execute crashed on job %s", job.id)
            outcome = ("failed", "infrastructure", f"driver error: {exc}")
        else:
            outcome = ("ran", result, None)
        finally:
            stop_beating.set()
            beat.join(timeout=self.timeout)
        if outcome[0] == "failed":
            if job.cancelled.is_set():
                return "cancelled"
            try:
                self.fail(job, outcome[1], outcome[2])
            except DriverError as exc:
                if exc.status != 409:
                    raise
                return "cancelled"
            return outcome[1]
        result = outcome[1]
        if isinstance(result, dict):
            result = RunResult(**result)
        self.push(job, result)
        return result.outcome

    def _beat(self, job: Job, stop: threading.Event) -> None:
        while not stop.wait(self.heartbeat):
            try:
                self.report(job, "running")
            except DriverError as exc:
                log.warning("heartbeat for job %s failed: %s", job.id, exc)

    def serve(
        self,
        execute: Callable[[Job], RunResult | dict],
        *,
        stop: threading.Event | None = None,
        max_jobs: int | None = None,
    ) -> int:
        """Claim and execute jobs one at a time until ``stop`` is set (or ``max_jobs`` ran)."""
        stop = stop or threading.Event()
        done = 0
        while not stop.is_set() and (max_jobs is None or done < max_jobs):
            try:
                jobs = self.claim(1)
            except DriverError as exc:
                log.warning("claim failed: %s", exc)
                stop.wait(self.poll_interval)
                continue
            if not jobs:
                stop.wait(self.poll_interval)
                continue
            for job in jobs:
                try:
                    self.run_one(job, execute)
                except DriverError as exc:
                    log.warning("job %s: %s", job.id, exc)
                done += 1
        return done


def _json_default(value):
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _read_json(exc: urllib.error.HTTPError):
    try:
        return json.loads(exc.read() or b"null")
    except (ValueError, OSError):
        return None
