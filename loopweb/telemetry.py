"""The Prometheus metrics every process records (served at /metrics by loopweb.ops).

Any layer may import this module; it imports no app. With ``PROMETHEUS_MULTIPROC_DIR`` set
(``make serve`` sets it), each process writes its values to files there and /metrics adds up
every process of the machine: web processes and task workers alike. Counts read from the database
(jobs by status, queue depths and ages, live workers) are computed when /metrics is read.
"""

from prometheus_client import Counter, Histogram

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

HTTP_REQUESTS = Counter(
    "loopweb_http_requests",
    "Requests answered, by route (URL pattern name), method and status.",
    ["route", "method", "status"],
)
HTTP_SECONDS = Histogram(
    "loopweb_http_request_seconds",
    "Time to answer a request, by route.",
    ["route"],
    buckets=_SECONDS,
)
JOBS_CLAIMED = Counter("loopweb_jobs_claimed", "Jobs handed to drivers by claims.")
RUNS_PUSHED = Counter(
    "loopweb_runs_pushed", "Runs pushed: created (a new run) or re-pushed.", ["kind"]
)
JOBS_ENDED = Counter(
    "loopweb_jobs_ended",
    "Attempts that reached a terminal status (completed, failed, canceled).",
    ["status"],
)
LEASE_EXPIRIES = Counter(
    "loopweb_lease_expiries", "Attempts ended because their driver's lease ran out."
)
LAUNCH_PASS_SECONDS = Histogram(
    "loopweb_launch_pass_seconds", "Duration of launch passes run as tasks.", buckets=_SECONDS
)
PROGRESS_SECONDS = Histogram(
    "loopweb_progress_compute_seconds",
    "Time to compute a ladder's progress: a whole board (full) or the climbers a change touched "
    "(partial); a board served again unchanged is not counted.",
    ["kind"],
    buckets=_SECONDS,
)
TASKS = Counter(
    "loopweb_tasks", "Background tasks finished, by task and status.", ["task", "status"]
)
DATABASE_UNAVAILABLE = Counter(
    "loopweb_database_unavailable",
    "Requests answered 503 because the database was unreachable.",
)
