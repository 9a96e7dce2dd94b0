"""Loopweb settings, read from the environment.

DATABASE_URL     database (default: SQLite file under var/)
SECRET_KEY       required when DEBUG is off
DEBUG            "1" to turn debugging on
ALLOWED_HOSTS    comma-separated host names
CSRF_TRUSTED_ORIGINS   comma-separated origins (scheme and host) trusted for unsafe requests
LOOPWEB_TASK_BACKEND   "database" (default) or "immediate"
LOOPWEB_LEASE_SECONDS  how long a driver's lease on a job lasts (default 120)
LOOPWEB_MAX_BODY_BYTES the largest request body accepted (5 MiB)

Production (docs/deployment.md has the whole picture):

DB_POOL          "1" pools PostgreSQL connections per process (psycopg's pool through Django);
                 on by default on PostgreSQL when DEBUG is off, "0" turns it off
DB_POOL_MIN_SIZE / DB_POOL_MAX_SIZE   connections each process keeps open / may open (2 /
                 WEB_THREADS + 1, i.e. 9).
                 Size it as: a web process needs one per thread plus one to spare
                 (gunicorn --threads 8 → 9); a task worker needs three (tasks, chores,
                 heartbeat). The sum over every process must stay below PostgreSQL's
                 max_connections (or the pooler's pool size) with room for migrations and psql.
DB_POOL_TIMEOUT  seconds a request waits for a pooled connection before it answers 503 (5)
CONN_MAX_AGE     persistent connections when the pool is off (seconds; 0 closes them per request)
DB_CONNECT_TIMEOUT  seconds a new connection may take (5)
LOOPWEB_RETRY_AFTER     the Retry-After (seconds) of a 503 while the database is unreachable (5)
LOOPWEB_METRICS_TOKEN   a bearer token that may read /metrics; without it only staff may (and
                        anyone when DEBUG is on)
LOG_FORMAT       "text" (default) or "json" (one JSON object per line)
LOG_LEVEL        the level of Loopweb's own loggers (INFO)
LOG_LEVEL_REQUESTS  the level of Django's request lines (INFO)
LOG_LEVEL_TASKS  the level of the task queue's per-task lines (quiet by default)
WEB_THREADS      threads per web process (8), which sizes DB_POOL_MAX_SIZE's default
LOOPWEB_HTTPS    "0" serves plain HTTP with DEBUG off (secure cookies, the redirect and HSTS off)
SECURE_SSL_REDIRECT    "0" leaves redirecting to HTTPS to the proxy in front
SECURE_HSTS_SECONDS    the HSTS max-age (one year)
LOOPWEB_SIGNIN_ADDRESS_LIMIT   sign-in attempts an address may make per window (30 per 300 s)
LOOPWEB_SIGNIN_USER_LIMIT      failed sign-ins a username may have per window (10 per 900 s)
LOOPWEB_PROXY_COUNT      how many proxies in front append to X-Forwarded-For (0: use the peer)
LOOPWEB_WORKER_DEAD_AFTER  seconds without a heartbeat after which a task worker is dead (30)
LOOPWEB_KEEP_TASKS_DAYS    days finished task rows are kept before the prune chore removes them (7)
LOOPWEB_EXPIRE_LEASES_EVERY, LOOPWEB_RECOVER_EVERY, LOOPWEB_VERIFY_GATE_EVERY,
LOOPWEB_PRUNE_EVERY, LOOPWEB_PRUNE_CHANGES_EVERY   seconds between runs of each worker chore
                 (15, 15, 60, 3600, 300), whatever the number of workers
LOOPWEB_WEBHOOK_ALLOWED_HOSTS  host names, addresses or CIDR ranges webhooks may target besides
                 public addresses (comma-separated; loopback and private ones only when listed)
LOOPWEB_WEBHOOK_TIMEOUT / _MAX_ATTEMPTS / _RETRY_BASE / _FAILING_AFTER / _KEEP_DAYS
                 seconds an attempt may take (5), attempts per event (6), the first retry's
                 delay, doubling after (30 s), events given up in a row that mark a subscription
                 failing (3), days the delivery log is kept (30)
LOOPWEB_PUBLIC_URL  where users reach the console, for links in webhook payloads
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from loopweb import logs
from loopweb.ops import pool

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_flag("DEBUG")
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off.")
    SECRET_KEY = "insecure-development-key-only-for-debug-mode-0123456789abcdef"

ALLOWED_HOSTS = [
    host.strip()
    for host in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
    if host.strip()
]
CSRF_TRUSTED_ORIGINS = [
    origin.strip()
    for origin in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",")
    if origin.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_tasks_db",
    "loopweb.runs",
    "signals_app",
    "evalsets",
    "ladders",
    "loopweb.console",
    "loopweb.webhooks",
    "loopweb.history",
    "loopweb.ops",
    "loopweb.reviewing",
    # Connects every hook's consumers in the order it declares (loopweb.pipeline.consumers).
    "loopweb.pipeline",
]

MIDDLEWARE = [
    "loopweb.ops.middleware.DatabaseUnavailableMiddleware",  # outermost: 503, never a 500
    "loopweb.ops.middleware.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response (SECURE_CSP below), a nonce per request.
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "loopweb.ops.throttle.SignInThrottleMiddleware",
]

if not DEBUG:
    # In production the web process serves the collected static files itself.
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
        "whitenoise.middleware.WhiteNoiseMiddleware",
    )

ROOT_URLCONF = "loopweb.urls"
WSGI_APPLICATION = "loopweb.wsgi.application"
ASGI_APPLICATION = "loopweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",  # csp_nonce, for <script nonce>
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "loopweb.console.navigation.navigation",  # the links the user's role can use
            ],
        },
    },
]

if "DATABASE_URL" not in os.environ:
    VAR_DIR.mkdir(exist_ok=True)  # the embedded database's home on a fresh clone
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'loopweb.sqlite3'}"),
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
    # Tests on SQLite use a file beside the configured one (test_<name>), like the demo's own
    # database, not Django's default in-memory one: live servers, threads and worker processes
    # each open their own connection. pytest-django suffixes it per xdist worker (_gw0, _gw1).
    if not str(DATABASES["default"]["NAME"]).startswith(("file:", ":memory:")):
        _sqlite = Path(DATABASES["default"]["NAME"])
        DATABASES["default"].setdefault("TEST", {}).setdefault(
            "NAME", str(_sqlite.with_name(f"test_{_sqlite.name}"))
        )
else:
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options["connect_timeout"] = int(os.environ.get("DB_CONNECT_TIMEOUT", "5"))
    if env_flag("DB_POOL", default=not DEBUG):
        # One pool per process; a request borrows a connection and gives it back at its end.
        # The pool checks a connection before lending it (loopweb.ops.pool: a round trip
        # unless it came back a moment ago and its socket is quiet), so after a database
        # restart no request is handed a dead one.
        options["pool"] = {
            "check": pool.check,
            "reset": pool.returned,
            "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "2")),
            "max_size": int(
                os.environ.get("DB_POOL_MAX_SIZE") or int(os.environ.get("WEB_THREADS", "8")) + 1
            ),
            "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "5")),
        }
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them; Django must not
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TASK_BACKEND_NAME = os.environ.get("LOOPWEB_TASK_BACKEND", "database")
if TASK_BACKEND_NAME not in {"database", "immediate"}:
    raise ImproperlyConfigured("LOOPWEB_TASK_BACKEND must be 'database' or 'immediate'.")
TASKS = {
    "default": {
        "BACKEND": (
            "django_tasks_db.DatabaseBackend"
            if TASK_BACKEND_NAME == "database"
            else "django.tasks.backends.immediate.ImmediateBackend"
        ),
        # Webhook deliveries have a queue of their own, which the worker serves from a thread
        # of its own: a receiver that hangs never holds up a launch pass.
        "QUEUES": ["default", "webhooks"],
    }
}

LOOPWEB_LEASE_SECONDS = int(os.environ.get("LOOPWEB_LEASE_SECONDS", "120"))

# Webhooks (loopweb.webhooks, docs/webhooks.md). Targets: public addresses, plus the host
# names (".suffix" for a domain), addresses and CIDR ranges listed here; loopback and private
# addresses only when listed.
LOOPWEB_WEBHOOK_ALLOWED_HOSTS = os.environ.get("LOOPWEB_WEBHOOK_ALLOWED_HOSTS", "")
LOOPWEB_WEBHOOK_TIMEOUT = float(os.environ.get("LOOPWEB_WEBHOOK_TIMEOUT", "5"))
LOOPWEB_WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("LOOPWEB_WEBHOOK_MAX_ATTEMPTS", "6"))
LOOPWEB_WEBHOOK_RETRY_BASE = float(os.environ.get("LOOPWEB_WEBHOOK_RETRY_BASE", "30"))
LOOPWEB_WEBHOOK_FAILING_AFTER = int(os.environ.get("LOOPWEB_WEBHOOK_FAILING_AFTER", "3"))
LOOPWEB_WEBHOOK_KEEP_DAYS = float(os.environ.get("LOOPWEB_WEBHOOK_KEEP_DAYS", "30"))


def _public_url(host: str, port: str) -> str:
    """Where the server this process belongs to listens (``HOST``, ``PORT``, which ``manage.py
    serve`` sets from its ``--bind``), as a browser on the same machine reaches it."""
    host = "127.0.0.1" if host in ("", "0.0.0.0", "::", "[::]") else host  # noqa: S104
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


# The address links in webhook payloads start with (the console as its users reach it).
LOOPWEB_PUBLIC_URL = os.environ.get("LOOPWEB_PUBLIC_URL") or _public_url(
    os.environ.get("HOST", ""), os.environ.get("PORT", "") or "8000"
)
LOOPWEB_DEFAULT_RUNS_IN_FLIGHT = 20

# Operations (loopweb.ops): the worker's chores, its heartbeat, answers while the database is
# away, metrics and sign-in throttling.
LOOPWEB_CHORES = {  # seconds between runs of each periodic chore, whatever the number of workers
    "expire_leases": float(os.environ.get("LOOPWEB_EXPIRE_LEASES_EVERY", "15")),
    "recover": float(os.environ.get("LOOPWEB_RECOVER_EVERY", "15")),
    "verify_gate": float(os.environ.get("LOOPWEB_VERIFY_GATE_EVERY", "60")),
    "prune": float(os.environ.get("LOOPWEB_PRUNE_EVERY", "3600")),
    "prune_changes": float(os.environ.get("LOOPWEB_PRUNE_CHANGES_EVERY", "300")),
    "webhooks": float(os.environ.get("LOOPWEB_WEBHOOKS_EVERY", "30")),
}
LOOPWEB_KEEP_TASKS_DAYS = float(os.environ.get("LOOPWEB_KEEP_TASKS_DAYS", "7"))
LOOPWEB_WORKER_DEAD_AFTER = float(os.environ.get("LOOPWEB_WORKER_DEAD_AFTER", "30"))
LOOPWEB_RETRY_AFTER = int(os.environ.get("LOOPWEB_RETRY_AFTER", "5"))
LOOPWEB_METRICS_TOKEN = os.environ.get("LOOPWEB_METRICS_TOKEN", "")
LOOPWEB_PROXY_COUNT = int(os.environ.get("LOOPWEB_PROXY_COUNT", "0"))


def _limit(name: str, default: str) -> tuple[int, int]:
    """``"30/300"``: that many per that many seconds."""
    count, _, seconds = os.environ.get(name, default).partition("/")
    return int(count), int(seconds or 60)


LOOPWEB_SIGNIN_ADDRESS_LIMIT = _limit("LOOPWEB_SIGNIN_ADDRESS_LIMIT", "30/300")
LOOPWEB_SIGNIN_USER_LIMIT = _limit("LOOPWEB_SIGNIN_USER_LIMIT", "10/900")
# A run push carries a whole run record; anything past this is refused before parsing.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("LOOPWEB_MAX_BODY_BYTES", str(5 * 1024 * 1024)))

AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 4},
    },
]
LOGIN_URL = "console:login"
LOGIN_REDIRECT_URL = "console:ladders"
LOGOUT_REDIRECT_URL = "console:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Static files are served by the web process itself (WhiteNoise) after `collectstatic`.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "loopweb.runs.auth.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "loopweb.runs.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # JSON in, JSON out: the schema names no other media type, and a form body would be read
    # by rules the schema does not state (a repeated field, a field that is not a set).
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["loopweb.runs.api.renderers.JSONRenderer"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "loopweb.runs.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Loopweb API",
    "DESCRIPTION": "Ladders, runs, drivers, signals and the verify gate.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the project's own static files: the docs work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No badge from validator.swagger.io: the policy refuses it, and the schema's address stays
    # here.
    "SWAGGER_UI_SETTINGS": {"validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    # JSON Schema 2020-12 states what the API refuses (const, if/then, propertyNames, null).
    "OAS_VERSION": "3.1.0",
    "ENUM_NAME_OVERRIDES": {
        "ClimberStatusEnum": "ladders.statuses.CLIMBER_STATUSES",
        # A review's verdict: the run's own reviews and those taken from a ladder's queue.
        "ReviewVerdictEnum": "loopweb.runs.models.work.ReviewVerdict.values",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "loopweb.runs.api.schema.document_errors",
    ],
}

# Content-Security-Policy, enforced on every response (docs/reliability.md, Security): scripts
# and styles only from this origin or carrying the request's nonce (csp_nonce in templates).
# No 'unsafe-inline', no 'unsafe-eval': a dynamic width or colour is an SVG attribute, never a
# style attribute; HTMX evaluates nothing and injects no <style> (templates/console/base.html).
# img-src allows data: for Swagger UI's icons.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG and env_flag("LOOPWEB_HTTPS", default=True):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_flag("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# One logging configuration for Django, gunicorn and the standalone driver (``loopweb.logs``).
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
LOGGING = logs.config(LOG_LEVEL)
