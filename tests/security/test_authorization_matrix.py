# ruff: noqa: E501 - the matrix is a table: each row stays on one line
"""The authorization matrix: every URL pattern the site serves × every method × the five callers.

The URL patterns are read from the resolver, so a new endpoint is covered the moment it is
routed, and the test fails until it is classified in ``MATRIX`` below. Each row is what each
caller gets, in the order of ``ROLES``:

    A anonymous · O owner · X other owner · R reviewer (the owner shares the ladder with them)
    · D driver

    +  allowed: served (2xx or 3xx), or refused for its input or state (400, 409) only
    1  401        3  403        4  404 (never revealing another owner's object)
    5  405        L  a redirect to a sign-in page

API calls use tokens; console and admin pages use a session. The objects in the paths belong to
the owner (``on`` names which one). A method a row does not list must be refused to everyone.
"""

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests.fuzz.world import ROLES
from tests.ladders.builders import PERFECT
from tests.security.urls import METHODS, all_patterns, fill

pytestmark = pytest.mark.django_db

# fmt: off
MATRIX = {
    # Liveness and readiness are public (they say nothing about anyone's data); metrics need
    # the metrics token or staff in production.
    "healthz":                                       {"GET": "+++++"},
    "readyz":                                        {"GET": "+++++"},
    "metrics":                                       {"GET": "11111"},
    # The schema and the docs are public; a token is had for a username and password.
    "api/schema/":                                   {"GET": "+++++"},
    "api/docs/":                                     {"GET": "+++++"},
    "api/auth/token":                                {"POST": "+++++"},
    # Ladders: the owner controls; a reviewer reads; anyone else is told nothing exists.
    "api/ladders/":                                  {"GET": "1++++", "POST": "1++33"},
    "api/ladders/summary":                           {"GET": "1++++"},
    "api/ladders/<int:pk>/":                         {"on": "ladder", "GET": "1+4+4", "PUT": "1+434", "DELETE": "1+434"},
    "api/ladders/<int:pk>/rungs/order":              {"on": "ladder", "POST": "1+434"},
    "api/ladders/<int:pk>/run":                      {"on": "ladder", "POST": "1+434"},
    "api/ladders/<int:pk>/stop":                     {"on": "ladder", "POST": "1+434"},
    "api/ladders/<int:pk>/climbers/retry":           {"on": "ladder", "POST": "1+434"},
    "api/ladders/<int:pk>/progress":                 {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/journal":                  {"on": "ladder", "POST": "1+434"},
    "api/ladders/<int:pk>/queue":                    {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/queue/<int:run>/reservation": {"on": "ladder", "POST": "1+4+4", "DELETE": "1+4+4"},
    "api/ladders/<int:pk>/queue/<int:run>/reviews":  {"on": "ladder", "POST": "1+4+4"},
    "api/ladders/<int:pk>/history":                  {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/history/<int:record_id>":  {"on": "record", "GET": "1+4+4"},
    "api/ladders/<int:pk>/compare":                  {"on": "ladder", "GET": "1+4+4"},
    # Reviewing: the owner and the ladder's reviewers judge pairs and read agreement; only the
    # owner sets the backlog threshold.
    "api/ladders/<int:pk>/pairwise":                 {"on": "ladder", "GET": "1+4+4", "POST": "1+4+4"},
    "api/ladders/<int:pk>/pairwise/next":            {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/pairwise/results":         {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/agreement":                {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/disagreements":            {"on": "ladder", "GET": "1+4+4"},
    "api/ladders/<int:pk>/backlog":                  {"on": "ladder", "GET": "1+4+4", "PUT": "1+434"},
    # Runs: readable by their owner, the ladder's reviewer and drivers; written by the owner
    # and drivers; reviewed by owners and reviewers.
    "api/^runs/$":                                   {"on": "leased_job", "GET": "1++++", "POST": "1+43+"},
    "api/^runs/(?P<pk>[^/.]+)/$":                    {"on": "run", "GET": "1+4++", "PUT": "1+43+"},
    "api/runs/<int:pk>/reviews":                     {"on": "run", "POST": "1+4+3"},
    "api/runs/<int:pk>/overrides":                   {"on": "run", "GET": "1+4++", "POST": "1+4+3"},
    "api/runs/<int:pk>/signals":                     {"on": "run", "GET": "1+4++", "POST": "1+43+"},
    "api/runs/<int:pk>/outcome":                     {"on": "run", "GET": "1+4++"},
    "api/signals/events":                            {"POST": "1++3+"},
    "api/account/acceptance-rule":                   {"GET": "1++++", "PUT": "1++++"},
    # Jobs belong to their owner; drivers work them through the driver protocol alone.
    "api/^jobs/$":                                   {"GET": "1++++", "POST": "1++33"},
    "api/^jobs/(?P<pk>[^/.]+)/$":                    {"on": "queued_job", "GET": "1+444"},
    "api/jobs/<int:pk>/cancel":                      {"on": "queued_job", "POST": "1+444"},
    "api/driver/claim":                              {"POST": "1333+"},
    "api/driver/jobs/<int:job_id>/status":           {"on": "leased_job", "POST": "1333+"},
    "api/driver/jobs/<int:job_id>/fail":             {"on": "leased_job", "POST": "1333+"},
    "api/driver/jobs/<int:job_id>/release":          {"on": "leased_job", "POST": "1333+"},
    # Provider budgets: everyone signed in reads them; only staff write them (no caller here).
    "api/^budgets/$":                                {"GET": "1++++", "POST": "13333"},
    "api/^budgets/(?P<pk>[^/.]+)/$":                 {"on": "budget", "GET": "1++++", "PUT": "13333", "PATCH": "13333", "DELETE": "13333"},
    # The catalog is shared: everyone signed in reads it, owners add to it, and only an entry's
    # creator (here the owner) or staff change or delete it. (Adding a version to a case is
    # adding an entry; the gg configuration's DELETE is the owner's 409: a combination uses it.)
    "api/^cases/$":                                  {"GET": "1++++", "POST": "1++33"},
    "api/^cases/(?P<slug>[-a-zA-Z0-9_]+)/$":          {"on": "case", "GET": "1++++"},
    "api/^cases/(?P<slug>[-a-zA-Z0-9_]+)/versions/$": {"on": "case", "GET": "1++++", "POST": "1++33"},
    "api/^models/$":                                 {"GET": "1++++", "POST": "1++33"},
    "api/^models/(?P<pk>[^/.]+)/$":                  {"on": "model", "GET": "1++++", "PATCH": "1+333"},
    "api/^gg-configurations/$":                      {"GET": "1++++", "POST": "1++33"},
    "api/^gg-configurations/(?P<pk>[^/.]+)/$":       {"on": "gg", "GET": "1++++", "PUT": "1+333", "DELETE": "1+333"},
    "api/^combinations/$":                           {"GET": "1++++", "POST": "1++33"},
    "api/^combinations/(?P<pk>[^/.]+)/$":            {"on": "combination", "GET": "1++++"},
    # Groups belong to their owner.
    "api/^groups/$":                                 {"GET": "1++33", "POST": "1++33"},
    "api/^groups/(?P<pk>[^/.]+)/$":                  {"on": "group", "GET": "1+433", "PUT": "1+433", "DELETE": "1+433"},
    # Evalsets are shared like the catalog; drivers journal runs; proposals belong to their owner.
    "api/^evalsets/$":                               {"GET": "1++++", "POST": "1++33"},
    "api/^evalsets/(?P<hash>[0-9a-f]{1,64})/$":      {"on": "evalset", "GET": "1++++"},
    "api/evalsets/<str:hash>/runs":                  {"on": "evalset", "GET": "1++++", "POST": "1++3+"},
    "api/^proposals/$":                              {"GET": "1++++", "POST": "1++33"},
    "api/^proposals/(?P<pk>[^/.]+)/$":               {"on": "proposal", "GET": "1+444"},
    "api/proposals/<int:pk>/apply":                  {"on": "proposal", "POST": "1+444"},
    "api/proposals/<int:pk>/outcomes":               {"on": "proposal", "GET": "1+444"},
    # Webhooks belong to their owner; reviewers and drivers register none.
    "api/webhooks/":                                 {"GET": "1++33", "POST": "1++33"},
    "api/webhooks/<int:pk>/":                        {"on": "webhook", "GET": "1+433", "PUT": "1+433", "DELETE": "1+433"},
    "api/webhooks/<int:pk>/deliveries":              {"on": "webhook", "GET": "1+433"},
    "api/webhooks/<int:pk>/ping":                    {"on": "webhook", "POST": "1+433"},
    "api/webhooks/<int:pk>/deliveries/<int:delivery_id>/redeliver": {"on": "webhook", "POST": "1+433"},
    # The console: the same rules over a session; a visitor is sent to sign in.
    "":                                              {"GET": "L++++"},
    "login/":                                        {"GET": "+++++", "POST": "+++++", "PUT": "+++++", "PATCH": "5++++", "DELETE": "5++++"},
    "logout/":                                       {"POST": "+++++"},
    "ladders/new/":                                  {"GET": "L++33", "POST": "L++33"},
    "ladders/<int:pk>/":                             {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/board":                        {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/edit/":                        {"on": "ladder", "GET": "L+434", "POST": "L+434"},
    "ladders/<int:pk>/run":                          {"on": "ladder", "POST": "L+434"},
    "ladders/<int:pk>/stop":                         {"on": "ladder", "POST": "L+434"},
    "ladders/<int:pk>/stop/cancel-running":          {"on": "ladder", "GET": "L+434", "POST": "L+434"},
    "ladders/<int:pk>/retry":                        {"on": "ladder", "POST": "L+434"},
    "ladders/<int:pk>/retry-all":                    {"on": "ladder", "POST": "L+434"},
    "ladders/<int:pk>/queue/":                       {"on": "ladder", "GET": "L+4+4", "POST": "L+4+4"},
    "ladders/<int:pk>/review-settings/":             {"on": "ladder", "GET": "L+434", "POST": "L+434"},
    "ladders/<int:pk>/delete/":                      {"on": "ladder", "GET": "L+434", "POST": "L+434"},
    "ladders/<int:pk>/history/":                     {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/history/<int:record_id>/":     {"on": "record", "GET": "L+4+4"},
    "ladders/<int:pk>/history/<int:record_id>/slots/<int:index>/<str:rung>/": {"on": "record", "GET": "L+4+4"},
    "ladders/<int:pk>/compare/":                     {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/pairwise/":                    {"on": "ladder", "GET": "L+4+4", "POST": "L+4+4"},
    "ladders/<int:pk>/pairwise/results/":            {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/agreement/":                   {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/disagreements/":               {"on": "ladder", "GET": "L+4+4"},
    "ladders/<int:pk>/backlog/":                     {"on": "ladder", "POST": "L+434"},
    "ladders/<int:pk>/standing":                     {"on": "ladder", "GET": "L+4+4"},
    "runs/<int:pk>/":                                {"on": "run", "GET": "L+4++"},
    "runs/<int:pk>/review":                          {"on": "run", "POST": "L+4+3"},
    "runs/<int:pk>/overrides":                       {"on": "run", "POST": "L+4+3"},
    "combinations/":                                 {"GET": "L++++", "POST": "L++33"},
    # The model catalog in the console: owners add; an entry's creator (or staff) changes it.
    "combinations/models/":                          {"POST": "L++33"},
    "combinations/models/<int:pk>/":                 {"on": "model", "POST": "L+333"},
    "groups/":                                       {"GET": "L++33", "POST": "L++33"},
    "groups/<int:pk>/":                              {"on": "group", "GET": "L+433", "POST": "L+433"},
    "account/acceptance-rule/":                      {"GET": "L++++", "POST": "L++++"},
    "budgets/":                                      {"GET": "L++++", "POST": "L3333"},
    "budgets/<int:pk>/":                             {"on": "budget", "POST": "L3333"},
    "ladders/<int:pk>/slots/<int:index>/<str:rung>/": {"on": "ladder", "GET": "L+4+4"},
    "proposals/":                                    {"GET": "L++++"},
    "proposals/<int:pk>/":                           {"on": "proposal", "GET": "L+444"},
    "evalsets/":                                     {"GET": "L++++"},
    "evalsets/<str:hash>/":                          {"on": "evalset", "GET": "L++++"},
    "settings/webhooks/":                            {"GET": "L++++", "POST": "L++33"},
    "settings/webhooks/<int:pk>/":                   {"on": "webhook", "GET": "L+444", "POST": "L+444"},
    "settings/webhooks/<int:pk>/log":                {"on": "webhook", "GET": "L+444"},
    "settings/webhooks/<int:pk>/ping":               {"on": "webhook", "POST": "L+444"},
    "settings/webhooks/<int:pk>/rotate":             {"on": "webhook", "POST": "L+444"},
    "settings/webhooks/<int:pk>/delete":             {"on": "webhook", "POST": "L+444"},
    "settings/webhooks/<int:pk>/deliveries/<int:delivery_id>/redeliver": {"on": "webhook", "POST": "L+444"},
    # The admin: staff only (none of the five callers is staff), but anyone may see its sign-in
    # page (Django's form views take PUT as POST), and its sign-out page sends a non-staff
    # caller to the admin index, whatever the method.
    "admin/login/":                                  {"GET": "+++++", "POST": "+++++", "PUT": "+++++"},
    "admin/logout/":                                 {m: "+++++" for m in ("GET", "POST", "PUT", "PATCH", "DELETE")},
}
# fmt: on
#: Every other admin page: sent to the admin's sign-in page, whatever the method.
ADMIN = {"GET": "LLLLL", "POST": "LLLLL"}
#: Pages whose success is itself a redirect to a sign-in page. (A signed-in caller is sent away
#: from the sign-in page, whatever the method; a visitor may only GET it or post the form.)
SIGNS_OUT = {"logout/", "admin/logout/"}


def row_of(route: str) -> dict | None:
    if route in MATRIX:
        return MATRIX[route]
    if route.startswith("admin/"):
        return ADMIN
    return None


def record_of(world) -> int:
    """A record of the owner's ladder: its dispatch stopped, and run again (once: the record a
    route asked for before is the next one's too)."""
    from ladders import services
    from loopweb.history.models import DispatchRecord

    kept = DispatchRecord.objects.filter(ladder=world.ladder).first()
    if kept is not None:
        return kept.pk
    services.stop_dispatch(ladder=world.ladder)
    services.start_dispatch(ladder=world.ladder, run_pass=False)
    return DispatchRecord.objects.get(ladder=world.ladder).pk


def ids_of(world, on: str | None) -> dict:
    if on == "record":
        rung = world.ladder.rungs.order_by("position")[0].rung_id
        return {"pk": world.ladder.pk, "record_id": record_of(world), "index": 0, "rung": rung}
    if on == "budget":
        from loopweb.runs.models import ProviderBudget

        return {"pk": ProviderBudget.objects.get_or_create(provider="matrix")[0].pk}
    if on is None:
        return {
            "app_label": "ladders",
            "object_id": "1",
            "id": "1",
            "content_type_id": "1",
            "url": "x/",
        }
    value = {
        "ladder": world.ladder.pk,
        "run": world.run.pk,
        "queued_job": world.queued_job.pk,
        "leased_job": world.leased_job.pk,
        "case": world.version.case.slug,
        "model": world.model_entry.pk,
        "gg": world.gg_configuration.pk,
        "combination": world.combination.pk,
        "group": world.group.pk,
        "evalset": world.evalset.hash,
        "proposal": world.proposal.pk,
        "webhook": world.extra["webhook"].pk,
    }[on]
    ids = {
        "pk": value,
        "job_id": value,
        "slug": value,
        "hash": value,
        "delivery_id": world.extra["delivery"].pk,
    }
    if on == "ladder":
        ids.update(
            index=0, rung=world.ladder.rungs.order_by("position")[0].rung_id, run=world.run.pk
        )
    return ids


def body_of(world, route: str, method: str):
    """A request body that would succeed for an allowed caller (so a refusal is about who
    asks, not what they sent)."""
    finished = "2030-01-01T00:00:00Z"
    bodies = {
        ("api/auth/token", "POST"): {"username": "olive", "password": "pw"},
        ("login/", "POST"): {"username": "olive", "password": "pw"},
        ("admin/login/", "POST"): {"username": "olive", "password": "pw"},
        ("api/^runs/$", "POST"): {
            "job": world.leased_job.pk,
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": finished,
        },
        ("api/^runs/(?P<pk>[^/.]+)/$", "PUT"): {
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": finished,
        },
        ("api/runs/<int:pk>/reviews", "POST"): {"aestheticRating": 4, "writeup": "ok"},
        ("api/runs/<int:pk>/overrides", "POST"): {"item": "starts", "passed": True},
        ("runs/<int:pk>/overrides", "POST"): {"item": "starts", "passed": "pass", "note": "ok"},
        ("api/ladders/<int:pk>/queue/<int:run>/reviews", "POST"): {"aestheticRating": 4},
        ("api/runs/<int:pk>/signals", "POST"): {
            "id": "matrix-1",
            "kind": "score",
            "name": "coverage",
            "value": 0.5,
            "observed_at": finished,
            "tier": "measured",
        },
        ("api/signals/events", "POST"): {
            "commit": "abc123",
            "name": "revert",
            "value": "reverted",
            "observed_at": finished,
            "tier": "reported",
        },
        ("api/driver/claim", "POST"): {"max": 1},
        ("api/driver/jobs/<int:job_id>/status", "POST"): {"status": "running"},
        ("api/driver/jobs/<int:job_id>/fail", "POST"): {"failure": "infrastructure"},
        ("api/driver/jobs/<int:job_id>/release", "POST"): {"reason": "rateLimited"},
        ("api/evalsets/<str:hash>/runs", "POST"): {"summary": {"passed": 1, "failed": 0}},
        ("api/ladders/<int:pk>/stop", "POST"): {"cancelRunning": False},
        ("ladders/<int:pk>/queue/", "POST"): {"run": world.run.pk, "aesthetic_rating": 4},
    }
    return bodies.get((route, method), {})


def client_for(world, role: str, console: bool):
    if console:
        client = Client()
        if role != "anonymous":
            client.force_login(world.users[role])
        return client
    client = APIClient()
    if role != "anonymous":
        client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens[role]}")
    return client


def sign_in_pages() -> tuple[str, str]:
    return reverse("console:login"), reverse("admin:login")


def outcome(response, route: str) -> str:
    code = response.status_code
    if code >= 500:
        return f"500 {response.content[:300]!r}"
    if code in (401, 403, 404, 405):
        return {401: "1", 403: "3", 404: "4", 405: "5"}[code]
    location = response.get("Location", "")
    if 300 <= code < 400 and location.startswith(sign_in_pages()) and route not in SIGNS_OUT:
        return "L"
    return "+"


def send(client, method: str, path: str, body, console: bool):
    if method == "GET":
        return client.get(path)
    if console:
        return client.generic(
            method, path, data=_form(body), content_type="application/x-www-form-urlencoded"
        )
    return getattr(client, method.lower())(path, body, format="json")


def _form(body: dict) -> str:
    from urllib.parse import urlencode

    return urlencode(body)


PATTERNS = all_patterns()


def test_every_url_pattern_is_classified_in_the_matrix():
    routes = {p.route for p in PATTERNS}
    missing = [p.label for p in PATTERNS if row_of(p.route) is None]
    assert not missing, (
        "These URL patterns are not in the authorization matrix "
        "(tests/security/test_authorization_matrix.py, MATRIX); classify who may call them:\n  "
        + "\n  ".join(missing)
    )
    stale = sorted(set(MATRIX) - routes)
    assert not stale, f"The matrix lists patterns the site no longer routes: {stale}"


def test_the_matrix_lists_every_method_each_api_view_serves():
    wrong = []
    for pattern in PATTERNS:
        served, row = pattern.served_methods(), row_of(pattern.route)
        if served is None or row is None:
            continue
        listed = {m for m in row if m in METHODS}
        if listed != served:
            wrong.append(
                f"{pattern.label}: serves {sorted(served)}, the matrix lists {sorted(listed)}"
            )
    assert not wrong, "\n".join(wrong)


def isolated(send_request):
    """Each request in its own savepoint, rolled back after it: every caller meets the same
    world (the first caller allowed to delete must not leave the next one a 404)."""
    savepoint = transaction.atomic()
    savepoint._from_testcase = True  # as Django's TestCase marks its own: durable blocks may nest
    with savepoint:
        response = send_request()
        transaction.set_rollback(True)
    return response


def check_row(world, pattern, clients, wrong: list[str]) -> None:
    """Every caller, every method the row lists (and the anonymous caller and the owner for
    every method it does not), against the row; mismatches are added to ``wrong``."""
    row = row_of(pattern.route)
    console = not pattern.route.startswith("api/")
    path = fill(pattern.route, ids_of(world, row.get("on")))

    def check(method, role, body, expected):
        response = isolated(lambda: send(clients[role], method, path, body, console))
        got = outcome(response, pattern.route)
        if expected is None:  # a method the row does not list: refused, whoever asks
            if got == "+" or got.startswith("500"):
                wrong.append(f"{method} {path} as {role} (not in the matrix): got {got}")
        elif got != expected:
            wrong.append(f"{method} {path} as {role}: expected {expected}, got {got}")

    for method in (m for m in METHODS if m in row):
        body = body_of(world, pattern.route, method)
        for role, expected in zip(ROLES, row[method], strict=True):
            check(method, role, body, expected)
    # The admin's pages are all behind the same staff check: they are not probed method by
    # method.
    if row is not ADMIN:
        for method in (m for m in METHODS if m not in row):
            for role in ("anonymous", "owner"):
                check(method, role, {}, None)


SITE = [p for p in PATTERNS if row_of(p.route) is not ADMIN]
ADMIN_PAGES = [p for p in PATTERNS if row_of(p.route) is ADMIN]


@pytest.mark.parametrize("pattern", SITE, ids=[p.route or "/" for p in SITE])
def test_each_caller_gets_what_the_matrix_says(world, pattern):
    if row_of(pattern.route) is None:
        pytest.fail(f"{pattern.label} is not classified (see the first test)")
    console = not pattern.route.startswith("api/")
    clients = {role: client_for(world, role, console) for role in ROLES}
    wrong = []
    check_row(world, pattern, clients, wrong)
    assert not wrong, f"{pattern.label}:\n  " + "\n  ".join(wrong)


def test_every_other_admin_page_sends_each_caller_to_sign_in(world):
    assert len(ADMIN_PAGES) > 50, [p.route for p in ADMIN_PAGES]
    clients = {role: client_for(world, role, console=True) for role in ROLES}
    wrong = []
    for pattern in ADMIN_PAGES:
        check_row(world, pattern, clients, wrong)
    assert not wrong, "\n".join(wrong)
