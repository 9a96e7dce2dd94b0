"""Content-Security-Policy: every response carries an enforced policy (Django's own
``ContentSecurityPolicyMiddleware`` and ``SECURE_CSP``) that lets a page run only the scripts
and styles the site serves from its own origin or marks with the request's nonce.

What holds it:

* the header itself, on console pages, the API docs, the admin, the sign-in page and the error
  pages, with the directives below; its nonce is new on every request;
* every console page the resolver routes (read from the resolver, so a new page is covered the
  moment it is routed; the test fails until it is classified in ``CONSOLE`` below), the API docs
  and the admin, rendered: each ``<script>`` has a same-origin ``src`` or carries this response's
  nonce, each ``<style>`` carries it, and no element has a ``style`` attribute (the policy has
  no 'unsafe-inline', so one would be dropped), an inline event handler or a ``javascript:`` URL.
  Fragments HTMX swaps into a page have no script or style at all: a nonce in one would be its
  own response's, never the page's;
* the templates themselves, read as text: the same rules for what a test does not render, and
  HTMX told never to evaluate code nor to inject its indicator ``<style>``.

tests/console/browser/test_no_policy_violations.py checks in Chromium that nothing is refused.
"""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import path, reverse

from ladders import services as ladder_services
from loopweb import urls as site_urls
from tests.factories import UserFactory
from tests.security.urls import all_patterns, fill

pytestmark = pytest.mark.django_db

BASE_DIR = Path(settings.BASE_DIR)

# The policy ----------------------------------------------------------------------------------


def policy_of(response) -> dict[str, list[str]]:
    """The enforced policy's directives, each with its source list."""
    assert "Content-Security-Policy-Report-Only" not in response, "report-only: nothing enforced"
    header = response.headers.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *values = part.split()
        assert name not in directives, f"{name} twice in {header!r}"
        directives[name] = values
    return directives


def nonce_of(response) -> str | None:
    found = [
        v[len("'nonce-") : -1]
        for v in policy_of(response).get("script-src", [])
        if v.startswith("'nonce-")
    ]
    return found[0] if found else None


#: Sources that would let in what the policy is there to keep out.
LOOSE = ("'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "*", "http:", "https:")


def assert_strict(directives: dict[str, list[str]]) -> None:
    """The policy Loopweb promises, whatever the page."""
    assert directives["default-src"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["form-action"] == ["'self'"]
    assert directives["connect-src"] == ["'self'"]
    assert set(directives["img-src"]) == {"'self'", "data:"}
    for name in ("script-src", "style-src"):
        assert "'self'" in directives[name]
        assert set(directives[name]) - {"'self'"} <= {
            v for v in directives[name] if v.startswith("'nonce-")
        }, f"{name} allows more than the site and the nonce: {directives[name]}"
    for name, values in directives.items():
        for loose in LOOSE:
            assert loose not in values, f"{name} allows {loose}"


# Reading a page ------------------------------------------------------------------------------

#: Script types a browser runs (an absent type is JavaScript); any other is data, never run.
EXECUTABLE = {"", "text/javascript", "application/javascript", "module"}


class Page(HTMLParser):
    """The elements of a page the policy governs."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.scripts: list[dict] = []
        self.styles: list[dict] = []
        self.stylesheets: list[dict] = []
        self.inline: list[str] = []  # style attributes, event handlers, javascript: URLs
        self.htmx_config: dict | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag == "script" and (a.get("type") or "").lower() in EXECUTABLE:
            self.scripts.append(a)
        elif tag == "style":
            self.styles.append(a)
        elif tag == "link" and "stylesheet" in a.get("rel", "").lower().split():
            self.stylesheets.append(a)
        elif tag == "meta" and a.get("name") == "htmx-config":
            self.htmx_config = json.loads(a["content"])
        for name, value in a.items():
            if name == "style" or name.startswith("on"):
                self.inline.append(f"<{tag} {name}={value!r}>")
            if re.match(r"\s*javascript:", value, re.I):
                self.inline.append(f"<{tag} {name}={value!r}>")

    handle_startendtag = handle_starttag


def same_origin(url: str) -> bool:
    return url.startswith("/") and not url.startswith("//")


def assert_page_keeps_to_the_policy(response) -> Page:
    """A whole page: the policy is strict and every script and style on it may run."""
    assert response.status_code < 500, response.status_code
    assert_strict(policy_of(response))
    page = Page(response.content.decode())
    nonce = nonce_of(response)
    where = response.request["PATH_INFO"]
    for script in page.scripts:
        if "src" in script:
            assert same_origin(script["src"]), f"{where}: a script from elsewhere: {script}"
        else:
            assert nonce and script.get("nonce") == nonce, f"{where}: an inline script {script}"
    for style in page.styles:
        assert nonce and style.get("nonce") == nonce, f"{where}: a <style> without the nonce"
    for sheet in page.stylesheets:
        assert same_origin(sheet["href"]), f"{where}: a stylesheet from elsewhere: {sheet}"
    assert page.inline == [], f"{where}: inline code or styles the policy drops: {page.inline}"
    return page


def assert_fragment_keeps_to_the_policy(response) -> None:
    """A fragment HTMX swaps into a page: nothing that would need a nonce."""
    assert response.status_code < 500, response.status_code
    assert_strict(policy_of(response))
    page = Page(response.content.decode())
    where = response.request["PATH_INFO"]
    assert page.scripts == [] and page.styles == [], f"{where}: a script or style in a fragment"
    assert page.inline == [], f"{where}: inline code or styles the policy drops: {page.inline}"


# The console, from the resolver --------------------------------------------------------------

PAGE, FRAGMENT, POST_ONLY, ANONYMOUS = "page", "fragment", "post-only", "anonymous page"

#: Every console route: a page (rendered as the owner), a fragment (its HTMX request), a page a
#: visitor sees, or one that only answers a form's POST (nothing to render).
# fmt: off
CONSOLE = {
    "":                                                   PAGE,
    "login/":                                             ANONYMOUS,
    "logout/":                                            POST_ONLY,
    "ladders/new/":                                       PAGE,
    "ladders/<int:pk>/":                                  PAGE,
    "ladders/<int:pk>/board":                             FRAGMENT,
    "ladders/<int:pk>/edit/":                             PAGE,
    "ladders/<int:pk>/delete/":                           PAGE,
    "ladders/<int:pk>/run":                               POST_ONLY,
    "ladders/<int:pk>/stop":                              POST_ONLY,
    "ladders/<int:pk>/stop/cancel-running":               PAGE,
    "ladders/<int:pk>/retry":                             POST_ONLY,
    "ladders/<int:pk>/retry-all":                         POST_ONLY,
    "ladders/<int:pk>/queue/":                            PAGE,
    "ladders/<int:pk>/review-settings/":                  PAGE,
    "ladders/<int:pk>/slots/<int:index>/<str:rung>/":     PAGE,  # and its fragment, below
    "ladders/<int:pk>/history/":                          PAGE,
    "ladders/<int:pk>/history/<int:record_id>/":          PAGE,
    # A record's slot: a page, and the record page's side panel (its fragment, below).
    "ladders/<int:pk>/history/<int:record_id>/slots/<int:index>/<str:rung>/": PAGE,
    "ladders/<int:pk>/compare/":                          PAGE,
    "ladders/<int:pk>/pairwise/":                         PAGE,
    "ladders/<int:pk>/pairwise/results/":                 PAGE,
    "ladders/<int:pk>/agreement/":                        PAGE,
    "ladders/<int:pk>/disagreements/":                    PAGE,
    "ladders/<int:pk>/backlog/":                          POST_ONLY,
    "ladders/<int:pk>/standing":                          FRAGMENT,
    "runs/<int:pk>/":                                     PAGE,
    "runs/<int:pk>/review":                               POST_ONLY,
    "runs/<int:pk>/overrides":                            POST_ONLY,  # its fragment: tests/console
    "combinations/":                                      PAGE,
    "combinations/models/":                               POST_ONLY,
    "combinations/models/<int:pk>/":                      POST_ONLY,
    "groups/":                                            PAGE,
    "groups/<int:pk>/":                                   PAGE,
    "account/acceptance-rule/":                           PAGE,
    "budgets/":                                           PAGE,
    "budgets/<int:pk>/":                                  POST_ONLY,
    "proposals/":                                         PAGE,
    "proposals/<int:pk>/":                                PAGE,
    "evalsets/":                                          PAGE,
    "evalsets/<str:hash>/":                               PAGE,
    "settings/webhooks/":                                 PAGE,
    "settings/webhooks/<int:pk>/":                        PAGE,
    "settings/webhooks/<int:pk>/log":                     FRAGMENT,
    "settings/webhooks/<int:pk>/ping":                    POST_ONLY,
    "settings/webhooks/<int:pk>/rotate":                  POST_ONLY,
    "settings/webhooks/<int:pk>/delete":                  POST_ONLY,
    "settings/webhooks/<int:pk>/deliveries/<int:delivery_id>/redeliver": POST_ONLY,
}
# fmt: on
NOT_CONSOLE = ("api/", "admin/", "healthz", "readyz", "metrics")


def console_routes() -> list[str]:
    return [p.route for p in all_patterns() if not p.route.startswith(NOT_CONSOLE)]


def test_every_console_route_is_classified():
    routes = console_routes()
    unclassified = [r for r in routes if r not in CONSOLE]
    assert unclassified == [], f"classify these console routes in CONSOLE: {unclassified}"
    gone = [r for r in CONSOLE if r not in routes]
    assert gone == [], f"routes no longer served: {gone}"


@pytest.fixture
def ended(world):
    """The owner's ladder with two ended dispatches in its history, running a third: history,
    compare and the height charts have something to draw, and the board polls."""
    for _ in range(2):
        ladder_services.stop_dispatch(ladder=world.ladder)
        ladder_services.start_dispatch(ladder=world.ladder, run_pass=False)
    return world


def values_of(world) -> dict:
    return {
        "pk": None,  # per route, below
        "index": 0,
        "rung": world.ladder.rungs.order_by("position")[0].rung_id,
        "hash": world.evalset.hash,
        "delivery_id": world.extra["delivery"].pk,
    }


def path_of(world, route: str) -> str:
    values = values_of(world)
    if route.startswith("ladders/"):
        values["pk"] = world.ladder.pk
    elif route.startswith("runs/"):
        values["pk"] = world.run.pk
    elif route.startswith("groups/"):
        values["pk"] = world.group.pk
    elif route.startswith("proposals/"):
        values["pk"] = world.proposal.pk
    elif route.startswith("settings/webhooks/"):
        values["pk"] = world.extra["webhook"].pk
    if "<int:record_id>" in route:
        from loopweb.history.models import DispatchRecord

        values["record_id"] = DispatchRecord.objects.filter(ladder=world.ladder).first().pk
    return fill(route, values)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_every_console_page_runs_only_what_the_policy_allows(ended):
    world = ended
    owner = signed_in(world.users["owner"])
    seen = []
    for route, kind in CONSOLE.items():
        if kind == POST_ONLY:
            continue
        url = path_of(world, route)
        if kind == FRAGMENT:
            assert_fragment_keeps_to_the_policy(owner.get(url, HTTP_HX_REQUEST="true"))
        else:
            client = Client() if kind == ANONYMOUS else owner
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            assert_page_keeps_to_the_policy(response)
        seen.append(url)
    # The slot's side panel is the slot page's fragment; the reviewer's queue is theirs too.
    slot = path_of(world, "ladders/<int:pk>/slots/<int:index>/<str:rung>/")
    assert_fragment_keeps_to_the_policy(owner.get(slot, HTTP_HX_REQUEST="true"))
    record_slot = path_of(
        world, "ladders/<int:pk>/history/<int:record_id>/slots/<int:index>/<str:rung>/"
    )
    assert_fragment_keeps_to_the_policy(owner.get(record_slot, HTTP_HX_REQUEST="true"))
    queue = reverse("console:queue", args=[world.ladder.pk])
    assert_page_keeps_to_the_policy(signed_in(world.users["reviewer"]).get(queue))
    assert len(seen) == sum(kind != POST_ONLY for kind in CONSOLE.values())


@pytest.mark.parametrize(
    "name",
    ["board", "queue", "history", "compare", "run-page", "webhooks", "rule", "evalset", "proposal"],
)
def test_a_console_page_carries_an_enforced_policy_with_a_nonce(ended, name):
    world = ended
    url = {
        "board": reverse("console:board", args=[world.ladder.pk]),
        "queue": reverse("console:queue", args=[world.ladder.pk]),
        "history": reverse("history:history", args=[world.ladder.pk]),
        "compare": reverse("history:compare", args=[world.ladder.pk]),
        "run-page": reverse("console:run-page", args=[world.run.pk]),
        "webhooks": reverse("webhooks_console:list"),
        "rule": reverse("console:acceptance-rule"),
        "evalset": reverse("evalsets:evalset", args=[world.evalset.hash]),
        "proposal": reverse("evalsets:proposal", args=[world.proposal.pk]),
    }[name]
    response = signed_in(world.users["owner"]).get(url)
    assert response.status_code == 200
    assert_strict(policy_of(response))
    assert nonce_of(response), "script-src names no nonce"
    page = assert_page_keeps_to_the_policy(response)
    assert any(s.get("nonce") == nonce_of(response) for s in page.scripts)


def test_the_nonce_is_new_on_every_request(world):
    owner = signed_in(world.users["owner"])
    url = reverse("console:board", args=[world.ladder.pk])
    nonces = {nonce_of(owner.get(url)) for _ in range(3)}
    nonces |= {nonce_of(Client().get(reverse("console:login"))) for _ in range(2)}
    assert None not in nonces and len(nonces) == 5
    assert all(len(n) >= 16 for n in nonces)


def test_the_sign_in_page_and_its_refusal_keep_to_the_policy(world):
    response = Client().get(reverse("console:login"))
    assert_page_keeps_to_the_policy(response)
    assert nonce_of(response)
    refused = Client().post(reverse("console:login"), {"username": "olive", "password": "no"})
    assert refused.status_code == 200
    assert_page_keeps_to_the_policy(refused)


def test_htmx_never_evaluates_code_nor_injects_its_own_style(world):
    page = assert_page_keeps_to_the_policy(
        signed_in(world.users["owner"]).get(reverse("console:board", args=[world.ladder.pk]))
    )
    assert page.htmx_config is not None
    assert page.htmx_config["includeIndicatorStyles"] is False
    assert page.htmx_config["allowEval"] is False
    assert page.htmx_config["allowScriptTags"] is False


# The API docs and the admin ------------------------------------------------------------------


def test_the_api_docs_keep_to_the_policy(world):
    response = Client().get(reverse("api-docs"))
    assert response.status_code == 200
    page = assert_page_keeps_to_the_policy(response)
    assert nonce_of(response)
    inline = [s for s in page.scripts if "src" not in s]
    assert len(inline) == 1, "Swagger UI's own set-up script, with the nonce"
    assert all("/static/" in s["src"] for s in page.scripts if "src" in s)


@pytest.fixture
def staff_client(world):
    user = UserFactory(username="stella")
    user.is_staff = user.is_superuser = True
    user.save()
    return signed_in(user)


def test_the_admin_sign_in_page_keeps_to_the_policy(world):
    response = Client().get(reverse("admin:login"))
    assert response.status_code == 200
    assert_page_keeps_to_the_policy(response)
    assert nonce_of(response)


def test_the_admin_index_keeps_to_the_policy(staff_client):
    response = staff_client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert_page_keeps_to_the_policy(response)
    assert nonce_of(response)


def test_every_admin_list_and_a_change_form_keep_to_the_policy(world, staff_client):
    urls = [
        reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for model in admin.site._registry
    ]
    urls.append(reverse("admin:ladders_ladder_change", args=[world.ladder.pk]))
    urls.append(reverse("admin:ladders_ladder_add"))
    for url in urls:
        response = staff_client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        assert_page_keeps_to_the_policy(response)


# Error pages ---------------------------------------------------------------------------------


def _crash(request):
    raise RuntimeError("a crash, for the 500 page")


#: This module is also a URLconf: the site's, plus a view that crashes.
urlpatterns = [path("csp-test/crash/", _crash), *site_urls.urlpatterns]
handler400 = site_urls.handler400
handler403 = site_urls.handler403
handler404 = site_urls.handler404
handler500 = site_urls.handler500


def test_a_console_404_keeps_to_the_policy(world):
    response = signed_in(world.users["owner"]).get("/no-such-page/")
    assert response.status_code == 404
    assert_page_keeps_to_the_policy(response)


def test_an_api_404_carries_the_policy_too(world):
    response = Client().get("/api/no-such-endpoint/")
    assert response.status_code == 404
    assert_strict(policy_of(response))


def test_a_csrf_failure_page_keeps_to_the_policy(world):
    response = Client(enforce_csrf_checks=True).post(
        reverse("console:login"), {"username": "olive", "password": "pw"}
    )
    assert response.status_code == 403
    assert_page_keeps_to_the_policy(response)


def test_a_refused_host_keeps_to_the_policy(world):
    response = Client(HTTP_HOST="evil.example").get(reverse("console:login"))
    assert response.status_code == 400
    assert_strict(policy_of(response))
    assert Page(response.content.decode()).inline == []


@pytest.mark.urls(__name__)
def test_a_server_error_page_keeps_to_the_policy(world):
    response = Client(raise_request_exception=False).get("/csp-test/crash/")
    assert response.status_code == 500
    assert_strict(policy_of(response))
    assert Page(response.content.decode()).inline == []


# The templates, read as text -----------------------------------------------------------------


def template_files() -> list[Path]:
    roots = [BASE_DIR / "templates"]
    for app in ("loopweb", "ladders", "evalsets", "signals_app"):
        roots += [d for d in (BASE_DIR / app).rglob("templates") if d.is_dir()]
    files = sorted({f for root in roots for f in root.rglob("*.html")})
    assert files, "no templates found"
    return files


def test_no_template_has_inline_handlers_styles_or_unnonced_code():
    problems = []
    for file in template_files():
        # What a template says in its comments is never rendered.
        text = re.sub(r"\{#.*?#\}", "", file.read_text())
        text = re.sub(r"\{% comment %\}.*?\{% endcomment %\}", "", text, flags=re.S)
        name = file.relative_to(BASE_DIR)
        for tag in re.finditer(r"<(script|style)\b([^>]*)>", text, re.I):
            kind, attrs = tag.group(1).lower(), tag.group(2)
            if kind == "script" and re.search(r"\bsrc\s*=", attrs):
                continue
            if not re.search(r'nonce="\{\{ csp_nonce \}\}"|\{% csp_nonce_attr %\}', attrs):
                problems.append(f"{name}: <{kind}{attrs}> without the nonce")
        attributes = re.finditer(r"<[a-zA-Z][\w:-]*\s[^>]*?\s(on[a-z]+|style)\s*=", text)
        problems += [f"{name}: a {found.group(1)} attribute" for found in attributes]
        if re.search(r"javascript:", text, re.I):
            problems.append(f"{name}: a javascript: URL")
        # HTMX runs with allowEval off: nothing of it may need eval.
        if re.search(r"\bhx-on|\bhx-vars\b|\bdata-hx-on", text):
            problems.append(f"{name}: hx-on / hx-vars (evaluated code)")
        evaluated = re.finditer(r"hx-(?:vals|headers)=['\"]\s*js:", text)
        problems += [f"{name}: {vals.group(0)} (evaluated code)" for vals in evaluated]
        triggers = [t.group(1) for t in re.finditer(r'hx-trigger="([^"]*)"', text)]
        problems += [f"{name}: a hx-trigger filter {t!r} (evaluated)" for t in triggers if "[" in t]
    assert problems == []


# The production shape ------------------------------------------------------------------------


def test_the_production_settings_send_the_policy(django_db_blocker):
    """DEBUG off, WhiteNoise in front, HTTPS: the sign-in page still carries the policy."""
    from tests.security.test_production_settings import production_env, run

    with django_db_blocker.unblock():
        env = production_env()
    done = run(["-m", "tests.security.production_probe"], env)
    assert done.returncode == 0, done.stderr
    headers = json.loads(done.stdout)["https"]["headers"]
    directives = {
        part.split()[0]: part.split()[1:] for part in headers["Content-Security-Policy"].split(";")
    }
    assert_strict(directives)
    assert any(v.startswith("'nonce-") for v in directives["script-src"])
    assert "Content-Security-Policy-Report-Only" not in headers
