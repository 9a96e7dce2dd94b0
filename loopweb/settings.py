"""Loopweb settings, read from the environment.

DATABASE_URL     database (default: SQLite file under var/)
SECRET_KEY       required when DEBUG is off
DEBUG            "1" to turn debugging on
ALLOWED_HOSTS    comma-separated host names
LOOPWEB_TASK_BACKEND   "database" (default) or "immediate"
LOOPWEB_LEASE_SECONDS  how long a driver's lease on a job lasts (default 120)
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

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
    "django_htmx",
    "django_tasks_db",
    "loopweb.runs",
    "signals_app",
    "evalsets",
    "ladders",
    "loopweb.console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

if not DEBUG:
    # In production the web process serves the collected static files itself.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

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
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
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
    }
}

LOOPWEB_LEASE_SECONDS = int(os.environ.get("LOOPWEB_LEASE_SECONDS", "120"))
LOOPWEB_DEFAULT_RUNS_IN_FLIGHT = 20
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
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
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
    "COMPONENT_SPLIT_REQUEST": True,
    # JSON Schema 2020-12 states what the API refuses (const, if/then, propertyNames, null).
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "loopweb.runs.api.schema.document_errors",
    ],
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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {
        "django.server": {"level": os.environ.get("LOG_LEVEL_REQUESTS", "INFO")},
    },
}
