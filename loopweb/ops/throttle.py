"""Brute-force protection for every way to sign in: ``POST /api/auth/token``, the console's
sign-in form and the admin's.

Two limits, each a count in a fixed window:

* **per address**: every sign-in attempt from one client address
  (``LOOPWEB_SIGNIN_ADDRESS_LIMIT``, 30 per 300 s);
* **per username**: failed attempts for one username, from anywhere
  (``LOOPWEB_SIGNIN_USER_LIMIT``, 10 per 900 s). A correct password is refused too while the
  limit holds, so guessing on does not pay.

Over either limit the request answers 429 with ``Retry-After``: the API's error shape under
/api/, the sign-in page with the message elsewhere. Counts live in PostgreSQL (``SignInCount``)
and are incremented by one atomic upsert each, so every web process, on every machine, counts
the same attempts; Django's database cache and DRF's throttle history read, then write, and lose
concurrent attempts.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import unicodedata

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from loopweb.ops.models import SignInCount

_UPSERT = """
INSERT INTO {table} (key, "window", count) VALUES (%s, %s, 1)
ON CONFLICT (key, "window") DO UPDATE SET count = {table}.count + 1
RETURNING count
"""


def _window(seconds: int, now: float) -> int:
    return int(now // seconds * seconds)


def bump(key: str, seconds: int, now: float | None = None) -> int:
    """Count one more for ``key`` in its current window; returns the new count."""
    window = _window(seconds, now or time.time())
    table = connection.ops.quote_name(SignInCount._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT.format(table=table), [key, window])
        return cursor.fetchone()[0]


def current(key: str, seconds: int, now: float | None = None) -> int:
    window = _window(seconds, now or time.time())
    found = SignInCount.objects.filter(key=key, window=window).values_list("count", flat=True)
    return next(iter(found), 0)


def counter_key(kind: str, value: str) -> str:
    """A counter's key: a digest, so neither usernames nor addresses are stored, and any text a
    client sends (a NUL, a lone surrogate, a megabyte) makes a key PostgreSQL can store."""
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return f"{kind}:{digest}"


def client_address(request) -> str:
    """The peer's address, or with LOOPWEB_PROXY_COUNT proxies in front, the address the
    outermost of them saw (the entry they appended to X-Forwarded-For)."""
    proxies = settings.LOOPWEB_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return request.META.get("REMOTE_ADDR", "")


def signin_name(value: object) -> str:
    """The name a sign-in counts against: normalized as Django normalizes a username before it
    checks the password (NFKC, so full-width ``ｖｉｃｔｉｍ２`` is ``victim2``), then case-folded,
    so no spelling of one name gets a count of its own."""
    return unicodedata.normalize("NFKC", str(value)).strip().casefold()


def _username(request) -> str:
    if request.content_type == "application/json":
        import json

        try:
            body = json.loads(request.body or b"{}")
        except (ValueError, UnicodeDecodeError):
            return ""
        value = body.get("username", "") if isinstance(body, dict) else ""
    else:
        value = request.POST.get("username", "")
    return signin_name(value)


def _retry_after(seconds: int, now: float) -> int:
    return max(1, int(_window(seconds, now) + seconds - now) + 1)


def record_failure(sender, credentials, request=None, **kwargs) -> None:
    """A wrong password (or an unknown user) counts against the username."""
    username = signin_name(credentials.get("username", ""))
    if username:
        bump(counter_key("user", username), settings.LOOPWEB_SIGNIN_USER_LIMIT[1])


user_login_failed.connect(record_failure, dispatch_uid="loopweb-signin-throttle")


class SignInThrottleMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self._paths: set[str] | None = None

    def paths(self) -> set[str]:
        if self._paths is None:
            found = set()
            for name in ("auth-token", "console:login", "admin:login"):
                with contextlib.suppress(NoReverseMatch):
                    found.add(reverse(name))
            self._paths = found
        return self._paths

    def __call__(self, request):
        if request.method == "POST" and request.path_info in self.paths():
            refused = self.refuse(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def refuse(self, request):
        now = time.time()
        count, seconds = settings.LOOPWEB_SIGNIN_ADDRESS_LIMIT
        address = client_address(request)
        if bump(counter_key("addr", address), seconds, now) > count:
            return self.too_many(request, "from this address", _retry_after(seconds, now))
        username = _username(request)
        count, seconds = settings.LOOPWEB_SIGNIN_USER_LIMIT
        if username and current(counter_key("user", username), seconds, now) >= count:
            return self.too_many(request, "for this user", _retry_after(seconds, now))
        return None

    def too_many(self, request, scope: str, retry_after: int):
        minutes = max(1, round(retry_after / 60))
        message = (
            f"Too many sign-in attempts {scope}. Try again in "
            f"{minutes} minute{'s' if minutes != 1 else ''}."
        )
        if request.path_info.startswith("/api/"):
            response = JsonResponse(
                {"detail": message, "code": "throttled", "errors": {"username": [message]}},
                status=429,
            )
        elif request.path_info.startswith("/admin/"):
            response = HttpResponse(message, content_type="text/plain", status=429)
        else:
            form = AuthenticationForm(request, data={"username": _username(request)})
            form.cleaned_data = {}  # not validated: nothing is checked while the limit holds
            form.add_error(None, message)
            response = render(
                request,
                "registration/login.html",
                {"form": form, "next": request.POST.get("next", "")},
                status=429,
            )
        response["Retry-After"] = str(retry_after)
        return response
