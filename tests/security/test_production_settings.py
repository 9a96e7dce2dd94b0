"""Production settings (DEBUG unset, a real SECRET_KEY and ALLOWED_HOSTS): ``manage.py check
--deploy`` is clean, cookies are secure, the security headers are sent, plain HTTP is sent to
HTTPS, and the settings refuse to start without a secret key. Each is checked in a fresh process,
so the settings module is read exactly as a deployment reads it."""

import json
import os
import secrets
import subprocess
import sys

import pytest

from tests.support.processes import BASE_DIR, database_url

pytestmark = pytest.mark.django_db(transaction=True)

HOST = "loopweb.example"


#: All a deployment's process inherits from ours: nothing a test run sets (DEBUG,
#: DJANGO_ALLOW_ASYNC_UNSAFE, LOOPWEB_*) leaks into the production settings.
INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "PGPASSWORD")


def production_env(**extra) -> dict:
    env = {k: os.environ[k] for k in INHERITED if k in os.environ}
    env.update(
        SECRET_KEY=secrets.token_urlsafe(60),
        ALLOWED_HOSTS=HOST,
        DATABASE_URL=database_url(),
        **extra,
    )
    return env


def run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_is_clean_with_production_settings():
    done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_production_settings_refuse_to_start_without_a_secret_key():
    env = production_env()
    del env["SECRET_KEY"]
    done = run(["manage.py", "check"], env)
    assert done.returncode != 0
    assert "SECRET_KEY is required" in done.stderr


@pytest.fixture(scope="module")
def probe(django_db_blocker):
    with django_db_blocker.unblock():
        env = production_env(PROBE_USER="probe")
    done = run(["-m", "tests.security.production_probe"], env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cookies_are_secure_and_http_only(probe):
    assert probe["DEBUG"] is False
    assert probe["session_cookie"] == {"secure": True, "httponly": True, "samesite": "Lax"}
    assert probe["https"]["csrf_cookie"] == {"secure": True, "samesite": "Lax"}
    assert probe["SESSION_COOKIE_SECURE"] and probe["CSRF_COOKIE_SECURE"]


def test_every_response_carries_the_security_headers(probe):
    headers = probe["https"]["headers"]
    assert probe["https"]["status"] == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"


def test_plain_http_is_sent_to_https(probe):
    assert probe["http"] == {"status": 301, "location": f"https://{HOST}/login/"}


def test_a_forged_host_header_is_refused(probe):
    assert probe["forged_host"] == 400


def test_request_sizes_are_bounded_and_passwords_hashed_slowly(probe):
    assert 0 < probe["DATA_UPLOAD_MAX_MEMORY_SIZE"] <= 10 * 1024 * 1024
    assert probe["DATA_UPLOAD_MAX_NUMBER_FIELDS"] <= 1000
    assert probe["SECRET_KEY_LENGTH"] >= 50
    assert "PBKDF2" in probe["PASSWORD_HASHER"] or "Argon2" in probe["PASSWORD_HASHER"]


@pytest.mark.parametrize(
    ("bind", "expected"),
    [
        ({}, "http://127.0.0.1:8000"),
        ({"PORT": "9042"}, "http://127.0.0.1:9042"),
        ({"HOST": "0.0.0.0", "PORT": "9042"}, "http://127.0.0.1:9042"),
        ({"HOST": "console.internal", "PORT": "80"}, "http://console.internal:80"),
        ({"PORT": "9042", "LOOPWEB_PUBLIC_URL": "https://x.example"}, "https://x.example"),
    ],
)
def test_links_in_webhooks_point_where_the_server_listens_unless_told_otherwise(bind, expected):
    read = "from django.conf import settings; print(settings.LOOPWEB_PUBLIC_URL)"
    env = production_env(DJANGO_SETTINGS_MODULE="loopweb.settings", **bind)
    done = run(["-c", f"import django; django.setup(); {read}"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_serve_tells_the_processes_it_starts_where_it_listens_and_keeps_its_own_environment():
    from loopweb.ops.management.commands.serve import children_env

    before = dict(os.environ)
    started = children_env("0.0.0.0:9043")
    assert (started["HOST"], started["PORT"]) == ("0.0.0.0", "9043")
    assert children_env("[::1]:9044")["HOST"] == "::1"
    socket = children_env("unix:/tmp/loopweb.sock")
    assert (socket.get("HOST"), socket.get("PORT")) == (before.get("HOST"), before.get("PORT"))
    assert dict(os.environ) == before
