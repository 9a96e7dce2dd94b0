"""gunicorn's configuration for Loopweb (``gunicorn --config python:loopweb.gunicorn_conf
loopweb.wsgi``). Every value comes from the environment, with the defaults ``make serve`` uses.

WEB_BIND         address to listen on (default ``$HOST:$PORT``, 127.0.0.1:8000)
WEB_CONCURRENCY  web processes (2): about one per core; they share nothing but the database,
                 so each computes its own copy of a watched board's progress
WEB_THREADS      threads per process (8): requests are mostly waiting on PostgreSQL, and a
                 process's threads share its copy of each board's progress
WEB_TIMEOUT      seconds a request may take before its process is replaced (30)
LOG_ACCESS       "1" for one access-log line per request (off: drivers make many)

Each process pools its database connections (settings: DB_POOL_MAX_SIZE ≥ WEB_THREADS + 1).
"""

import os

from loopweb import logs

bind = os.environ.get("WEB_BIND") or (
    f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
)
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "8"))
worker_class = "gthread"
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))
graceful_timeout = 10
keepalive = 5
# Requests are small; a body is capped by LOOPWEB_MAX_BODY_BYTES in Django.
limit_request_line = 8190

accesslog = "-" if logs.access_logged() else None
errorlog = "-"
loglevel = "warning"
logconfig_dict = logs.config()  # the same configuration as Django's LOGGING


def post_worker_init(worker):
    """The web process has loaded the app: what it holds now stays (``loopweb.memory``)."""
    from loopweb import memory

    memory.settle()


def child_exit(server, worker):
    """A web process is gone (replaced, or killed): its metrics files stay, counted as a dead
    process's, so the machine's totals do not drop."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
