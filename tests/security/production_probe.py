"""Run as ``python -m tests.security.production_probe`` with production settings in the
environment (DEBUG unset): prints, as JSON, the security settings in force and what a request
over HTTPS and one over plain HTTP get back. Used by ``test_production_settings``."""

import json
import os
import sys

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "loopweb.settings")
    django.setup()
    from django.conf import settings
    from django.test import Client
    from django.test.utils import setup_test_environment

    names = [
        "DEBUG",
        "SESSION_COOKIE_SECURE",
        "SESSION_COOKIE_HTTPONLY",
        "SESSION_COOKIE_SAMESITE",
        "CSRF_COOKIE_SECURE",
        "CSRF_COOKIE_SAMESITE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
        "SECURE_CONTENT_TYPE_NOSNIFF",
        "SECURE_REFERRER_POLICY",
        "SECURE_CROSS_ORIGIN_OPENER_POLICY",
        "X_FRAME_OPTIONS",
        "DATA_UPLOAD_MAX_MEMORY_SIZE",
        "DATA_UPLOAD_MAX_NUMBER_FIELDS",
        "ALLOWED_HOSTS",
    ]
    found = {name: getattr(settings, name, None) for name in names}
    found["SECRET_KEY_LENGTH"] = len(settings.SECRET_KEY)
    found["PASSWORD_HASHER"] = settings.PASSWORD_HASHERS[0]

    setup_test_environment(debug=False)  # keeps DEBUG off; lets the client talk to the app
    client = Client(HTTP_HOST=settings.ALLOWED_HOSTS[0])
    secure = client.get("/login/", secure=True)
    plain = client.get("/login/")
    cookie = secure.cookies.get("csrftoken")
    found["https"] = {
        "status": secure.status_code,
        "headers": {k: v for k, v in secure.headers.items()},
        "csrf_cookie": None
        if cookie is None
        else {"secure": bool(cookie["secure"]), "samesite": cookie["samesite"]},
    }
    found["http"] = {"status": plain.status_code, "location": plain.get("Location")}
    forged = Client(HTTP_HOST="evil.example").get("/login/", secure=True)
    found["forged_host"] = forged.status_code
    username = os.environ.get("PROBE_USER")
    if username:
        from django.contrib.auth import get_user_model

        get_user_model().objects.create_user(username=username, password="probe-pw-1")
        signed_in = client.post(
            "/login/", {"username": username, "password": "probe-pw-1"}, secure=True
        )
        session = signed_in.cookies.get(settings.SESSION_COOKIE_NAME)
        found["session_cookie"] = (
            None
            if session is None
            else {
                "secure": bool(session["secure"]),
                "httponly": bool(session["httponly"]),
                "samesite": session["samesite"],
            }
        )
    json.dump(found, sys.stdout, default=str)


if __name__ == "__main__":
    main()
