"""The driver protocol over HTTP (API.md, "Jobs, runs and drivers").

    driver = Driver("http://127.0.0.1:8000", token)
    driver.serve(execute)   # execute(job) -> RunResult, or raises Failure or RateLimited

``execute`` raises ``RateLimited`` when the provider refused the model's call (a 429) before the
model did anything: the job is released back to the queue as it was (no attempt, no retry used)
and the provider's budget on the server backs off (API.md, "Provider budgets").

Every call is retried on connection errors, 5xx and 429, with exponential backoff, or after
the server's ``Retry-After`` when it gives one (it does while its database is unreachable). A
lost server is reported in one log line per process, and its return in another. A push is safe
to retry: the server treats a second push for a job that has its run as a re-push of that run.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loopweb.driver.outage import Outage

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


class RateLimited(Exception):  # noqa: N818 - it reads as what the provider said
    """Raise from ``execute`` when the provider refused the call with a rate limit (HTTP 429)
    before the model did anything, e.g. ``RateLimited(retry_after=20)`` with the provider's
    ``Retry-After`` in seconds. The driver releases the job (``POST /api/driver/jobs/{id}/release``
    with ``rateLimited``): it is queued again unchanged, and the budgets it is under back off.

    Raise it only before the model did any work: a run that had started should end as a
    failure (``Failure``) or push its run, as the attempt then counts.
    """

    def __init__(self, retry_after: float | None = None, detail: str = ""):
        super().__init__(detail or "rate limited")
        self.retry_after = retry_after
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
    #: Set when the driver is stopping: ``execute`` should give up (the attempt is reported as
    #: an infrastructure failure, so the server retries it at once).
    stopping: threading.Event = field(default_factory=threading.Event)

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
        retries: int = 8,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        stop: threading.Event | None = None,
        on_pushed: Callable[[Job, dict], None] | None = None,
    ):
        self.url = url.rstrip("/")
        self.token = token
        self.poll_interval = poll_interval
        self.heartbeat = heartbeat
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        #: Set to stop: waits end at once and calls are no longer retried.
        self.stop = stop or threading.Event()
        self._outage = _outage_of(self.url)
        #: Called with the job and the server's answer after each push it acknowledged.
        self.on_pushed = on_pushed

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
            wait = None
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                    raw = response.read()
                    if not raw and response.status != 204:
                        # Every call of the protocol answers a document: nothing at all is an
                        # answer cut off before its body (a server stopping mid-answer).
                        raise http.client.IncompleteRead(raw)
                    self._outage.back()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as exc:
                payload = _read_json(exc)
                if exc.code < 500 and exc.code != 429:
                    self._outage.back()
                    raise DriverError(
                        f"{method} {path}: {exc.code} {payload}", exc.code, payload
                    ) from exc
                error = DriverError(f"{method} {path}: {exc.code}", exc.code, payload)
                wait = _retry_after(exc.headers.get("Retry-After"))
                reason = f"{exc.code} {_detail(payload) or exc.reason}"
            except (
                urllib.error.URLError,
                ConnectionError,
                TimeoutError,
                OSError,
                # An answer cut short (the server stopped in the middle of it).
                http.client.HTTPException,
            ) as exc:
                error = DriverError(f"{method} {path}: {exc}")
                reason = _reason(exc)
            if attempt == self.retries or self.stop.is_set():
                raise error
            pause = min(wait if wait is not None else delay, self.max_backoff * 2)
            self._outage.lost(reason)
            if self.stop.wait(pause):
                raise error
            delay = min(delay * 2, self.max_backoff)
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

    def release(self, job: Job, retry_after: float | None = None) -> dict:
        """Hand a job back as rate limited: queued again as it was, its budgets backed off."""
        body: dict[str, Any] = {"reason": "rateLimited"}
        if retry_after is not None:
            body["retryAfter"] = max(0.0, min(float(retry_after), 3600.0))
        return self.call("POST", f"/api/driver/jobs/{job.id}/release", body)

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
        answer = self.call("POST", "/api/runs/", body)
        if self.on_pushed is not None:
            self.on_pushed(job, answer)
        return answer

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
        except RateLimited as limited:
            outcome = ("released", limited.retry_after, limited.detail)
        except Failure as failure:
            outcome = ("failed", failure.failure, failure.detail)
        except Exception as exc:  # noqa: BLE001 - the driver's own crash is an infrastructure failure
            if not job.stopping.is_set():
                log.exception("execute crashed on job %s", job.id)
            outcome = ("failed", "infrastructure", f"driver error: {exc}")
        else:
            outcome = ("ran", result, None)
        finally:
            stop_beating.set()
            beat.join(timeout=self.timeout)
        if outcome[0] == "released":
            return self._release_limited(job, outcome[1])
        if outcome[0] == "failed":
            if job.cancelled.is_set():
                return "cancelled"
            if job.stopping.is_set():
                outcome = ("failed", "infrastructure", "the driver stopped")
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

    def _release_limited(self, job: Job, retry_after: float | None) -> str:
        if job.cancelled.is_set():
            return "cancelled"
        try:
            self.release(job, retry_after)
        except DriverError as exc:
            if exc.status != 409:
                raise
            return "cancelled"
        log.info(
            "job %s released: the provider is rate limiting",
            job.id,
            extra={"event": "job.released", "job": job.id},
        )
        return "released"

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
        if stop is not None:
            self.stop = stop
        stop = self.stop
        done = 0
        while not stop.is_set() and (max_jobs is None or done < max_jobs):
            try:
                jobs = self.claim(1)
            except DriverError as exc:
                if exc.status is not None and exc.status < 500 and exc.status != 429:
                    log.warning("claim refused: %s", exc)
                # A lost server was reported once already; keep asking, patiently.
                stop.wait(self.poll_interval)
                continue
            if not jobs:
                stop.wait(self.poll_interval)
                continue
            for job in jobs:
                job.stopping = stop
                try:
                    self.run_one(job, execute)
                except DriverError as exc:
                    if not stop.is_set():
                        log.warning("job %s: %s", job.id, exc)
                done += 1
        return done


#: One outage per server URL in a process, so a fleet reports a lost server in one line (and its
#: return in another).
_outages: dict[str, Outage] = {}
_outages_lock = threading.Lock()


def _outage_of(url: str) -> Outage:
    with _outages_lock:
        if url not in _outages:
            _outages[url] = Outage(
                f"server {url}", event="server", meanwhile="retrying with backoff", log=log
            )
        return _outages[url]


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number of seconds; dates are not sent by Loopweb)."""
    try:
        return max(0.0, min(float(value), 300.0)) if value else None
    except ValueError:
        return None


def _detail(payload: Any) -> str:
    return payload.get("detail", "") if isinstance(payload, dict) else ""


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "reason", None)
    if isinstance(inner, BaseException):
        exc = inner
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return str(text)


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
