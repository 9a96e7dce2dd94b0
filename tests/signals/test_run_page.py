"""The run's page in the console and the admin show its signals and its outcome with the reason."""

import pytest
from django.test import Client

from signals_app.models import AcceptanceRule, Signal
from tests.signals.conftest import signal, signals_url

pytestmark = pytest.mark.django_db


def browser(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def test_the_run_page_shows_signals_and_the_outcome_with_its_reason(owner, owner_api, run):
    owner_api.post(
        signals_url(run),
        [signal(id="t1", value="fail"), signal(id="b1", kind="score", name="bench_score", value=7)],
        format="json",
    )
    response = browser(owner).get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert '<main id="main"' in page  # the console's layout
    assert 'id="signals"' in page and "<code>t1</code>" in page and "bench_score" in page
    assert 'data-result="failure"' in page
    assert "latest tests verdict is fail" in page
    assert '<tr data-state="fail">' in page


def test_the_run_page_of_a_run_with_no_signals(owner, run):
    page = browser(owner).get(f"/runs/{run.pk}/").content.decode()
    assert "No signals yet." in page
    assert "no tests verdict yet" in page


def test_the_run_page_escapes_what_clients_sent(owner, owner_api, run):
    body = signal(id="<script>x</script>", kind="event", name="issue", value="<b>GH</b>")
    owner_api.post(signals_url(run), body, format="json")
    page = browser(owner).get(f"/runs/{run.pk}/").content.decode()
    assert "<script>x</script>" not in page
    assert "&lt;script&gt;" in page


def test_the_run_page_needs_a_signed_in_user(client, run):
    response = client.get(f"/runs/{run.pk}/")
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_an_outsider_gets_404_for_the_run_page(outsider, run):
    assert browser(outsider).get(f"/runs/{run.pk}/").status_code == 404


def test_the_run_page_is_read_only(owner, run):
    assert browser(owner).post(f"/runs/{run.pk}/").status_code in (403, 405)


def test_a_run_page_with_an_unreadable_stored_rule_says_so(owner, run):
    run.acceptance_rule = ["not", "a", "rule"]
    run.save()
    response = browser(owner).get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    assert 'role="alert"' in response.content.decode()


def test_the_run_page_shows_a_score_against_its_own_threshold(owner, owner_api, run):
    owner_api.post(
        signals_url(run),
        [
            signal(
                id="b1",
                kind="score",
                name="bench_score",
                value=2450,
                threshold=2400,
                better="higher",
            ),
            signal(id="r1", kind="score", name="runtime", value=90, threshold=60, better="lower"),
            signal(id="q1", kind="score", name="quality", value=3),
        ],
        format="json",
    )
    page = browser(owner).get(f"/runs/{run.pk}/").content.decode()
    assert (
        '<td data-label="Against its threshold" data-threshold="pass">pass (at least 2400)</td>'
        in page
    )
    assert (
        '<td data-label="Against its threshold" data-threshold="fail">fail (at most 60)</td>'
        in page
    )
    assert '<td data-label="Against its threshold" data-threshold="">' in page


# -- the admin --------------------------------------------------------------------------------


def test_the_admin_lists_signals_with_filters_and_search(staff, owner_api, run, make_run):
    owner_api.post(signals_url(run), signal(id="t1"), format="json")
    owner_api.post(signals_url(make_run()), signal(id="other"), format="json")
    admin = browser(staff)
    page = admin.get("/admin/signals_app/signal/").content.decode()
    assert "t1" in page and "other" in page and f"/runs/{run.pk}/" in page
    searched = admin.get("/admin/signals_app/signal/", {"q": str(run.pk)}).content.decode()
    assert "t1" in searched and "other" not in searched
    for query in ({"kind__exact": "verdict"}, {"tier__exact": "verified"}):
        assert admin.get("/admin/signals_app/signal/", query).status_code == 200


def test_the_admin_shows_a_score_against_its_own_threshold(staff, owner_api, run):
    body = signal(id="b1", kind="score", name="perf", value=3, threshold=5, better="higher")
    owner_api.post(signals_url(run), body, format="json")
    page = browser(staff).get("/admin/signals_app/signal/").content.decode()
    assert "column-threshold_reading" in page
    assert "fail (at least 5)" in page


def test_the_admin_cannot_add_or_change_a_signal(staff, owner_api, run):
    owner_api.post(signals_url(run), signal(id="t1"), format="json")
    admin = browser(staff)
    stored = Signal.objects.get()
    assert admin.get("/admin/signals_app/signal/add/").status_code == 403
    url = f"/admin/signals_app/signal/{stored.pk}/change/"
    shown = admin.get(url)
    assert shown.status_code == 200
    token = shown.cookies["csrftoken"].value
    assert admin.post(url, {"csrfmiddlewaretoken": token, "name": "x"}).status_code == 403
    stored.refresh_from_db()
    assert stored.name == "tests"


def test_the_admin_deletes_neither_a_run_nor_its_signals(staff, owner_api, run):
    owner_api.post(signals_url(run), signal(id="t1"), format="json")
    stored = Signal.objects.get()
    admin = browser(staff)
    assert admin.get(f"/admin/runs/run/{run.pk}/delete/").status_code == 403
    assert admin.get(f"/admin/signals_app/signal/{stored.pk}/delete/").status_code == 403
    assert Signal.objects.filter(pk=stored.pk, run=run).exists()


def test_the_admin_checks_acceptance_rules_like_the_api(staff, owner):
    admin = browser(staff)
    add = admin.get("/admin/signals_app/acceptancerule/add/")
    token = add.cookies["csrftoken"].value
    form = {
        "csrfmiddlewaretoken": token,
        "user": owner.pk,
        "name": "perf",
        "description": "fast",
        "requires": '["bench_score"]',
        "score": "null",
        "excludes_events": "null",
        "window_days": "14",
        "ext": "null",
    }
    refused = admin.post("/admin/signals_app/acceptancerule/add/", form)
    assert refused.status_code == 200
    assert b"bench_score" in refused.content and b"requires names verdicts only" in refused.content
    assert not AcceptanceRule.objects.exists()
    form["requires"] = '["tests"]'
    saved = admin.post("/admin/signals_app/acceptancerule/add/", form)
    assert saved.status_code == 302
    stored = AcceptanceRule.objects.get()
    assert stored.excludes_events == ["revert", "incident"]
    assert admin.get("/admin/signals_app/acceptancerule/").status_code == 200


# -- the contract -----------------------------------------------------------------------------


def test_the_openapi_schema_describes_the_signal_endpoints(owner_api):
    schema = owner_api.get("/api/schema/", {"format": "json"}).json()
    for path in (
        "/api/runs/{id}/signals",
        "/api/runs/{id}/outcome",
        "/api/signals/events",
        "/api/account/acceptance-rule",
    ):
        assert path in schema["paths"], path
    fields = schema["components"]["schemas"]["Signal"]["properties"]
    assert {"id", "kind", "name", "value", "observed_at", "tier", "at_attempt"} <= set(fields)
