"""The ladders page and signing in and out."""

from django.urls import reverse

from ladders import services
from tests.console.helpers import segment_width, text_of
from tests.ladders.builders import (
    PERFECT,
    climbers,
    make_ladder,
    stopped_mid_climb,
    versions,
    work,
)


def test_the_ladders_page_lists_the_callers_ladders_with_their_status(
    owner_client, owner, outsider, reviewer, driver, run_tasks
):
    idle = make_ladder(owner, versions(1, prefix="a"), climbers(1, prefix="a"), name="alpha")
    running = make_ladder(owner, versions(2, prefix="b"), climbers(2, prefix="b"), name="beta")
    done = make_ladder(owner, versions(1, prefix="c"), climbers(1, prefix="c"), name="gamma")
    services.start_dispatch(ladder=done)
    work(driver, run_tasks, PERFECT)
    services.start_dispatch(ladder=running)
    theirs = make_ladder(outsider, versions(1, prefix="d"), [], name="not yours")
    page = owner_client.get(reverse("console:ladders"))
    html, text = page.content.decode(), text_of(page)
    assert page.status_code == 200
    rows = {
        ladder.name: html.split(f'data-ladder="{ladder.pk}"')[1].split("</tr>")[0]
        for ladder in (idle, running, done)
    }
    assert "Not run yet" in rows["alpha"] and "No dispatch yet" in rows["alpha"]
    assert "Running" in rows["beta"] and "0/4 done · 2 under way" in rows["beta"]
    assert "Finished" in rows["gamma"] and "1/1" in rows["gamma"]
    assert 'role="progressbar"' in rows["gamma"]
    assert "not yours" not in text
    assert 'id="create-ladder"' in html
    assert reverse("console:board", args=[theirs.pk]) not in html


def test_a_stopped_dispatch_is_never_listed_as_all_done(owner_client, owner, driver, run_tasks):
    """Its skipped slots need no more runs, but the runs the Stop left unrun were never run: the
    list says so, and draws them apart from the runs done."""
    ladder = stopped_mid_climb(owner, driver, run_tasks, cancel_running=True)
    html = owner_client.get(reverse("console:ladders")).content.decode()
    row = html.split(f'data-ladder="{ladder.pk}"')[1].split("</tr>")[0]
    assert "Stopped" in row
    assert "5/8 done · 3 not run (stopped)" in row
    assert "8/8" not in row
    assert (segment_width(row, "runbar-done"), segment_width(row, "runbar-stopped")) == (
        "62.50%",
        "37.50%",
    )


def test_a_reviewer_sees_the_ladders_shared_with_them(reviewer_client, ladder):
    page = reviewer_client.get(reverse("console:ladders"))
    text = text_of(page)
    assert "Shared with you" in text and "platformer" in text
    assert 'id="create-ladder"' not in page.content.decode()


def test_signing_in_and_out(client, owner):
    page = client.get(reverse("console:login"))
    html = page.content.decode()
    assert '<label for="id_username">Username</label>' in html
    assert '<label for="id_password">Password</label>' in html
    wrong = client.post(reverse("console:login"), {"username": "olive", "password": "nope"})
    assert "Please enter a correct username and password" in text_of(wrong)
    signed_in = client.post(
        reverse("console:login"), {"username": "olive", "password": "pw"}, follow=True
    )
    assert signed_in.redirect_chain[-1][0] == reverse("console:ladders")
    assert "Signed in as olive" in text_of(signed_in)
    signed_out = client.post(reverse("console:logout"), follow=True)
    assert "You have signed out." in text_of(signed_out)
    assert client.get(reverse("console:ladders")).status_code == 302


def test_sign_in_is_csrf_protected(owner):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert (
        strict.post(reverse("console:login"), {"username": "olive", "password": "pw"}).status_code
        == 403
    )
    strict.get(reverse("console:login"))
    token = strict.cookies["csrftoken"].value
    response = strict.post(
        reverse("console:login"),
        {"username": "olive", "password": "pw", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302


def test_the_ladders_list_counts_declared_climbers_shows_the_last_run_and_searches(
    owner_client, owner, driver, run_tasks, django_assert_max_num_queries
):
    from tests.factories import CombinationFactory, CoverageGroupFactory

    shared = CombinationFactory(model="dup")
    group = CoverageGroupFactory(owner=owner, name="g", combinations=[shared, CombinationFactory()])
    idle = make_ladder(owner, versions(1, prefix="e"), [shared], groups=[group.pk], name="epsilon")
    ran = make_ladder(owner, versions(1, prefix="z"), climbers(1, prefix="z"), name="zeta")
    services.start_dispatch(ladder=ran)
    work(driver, run_tasks, PERFECT)
    with django_assert_max_num_queries(20):
        page = owner_client.get(reverse("console:ladders"))
    html = page.content.decode()
    idle_row = html.split(f'data-ladder="{idle.pk}"')[1].split("</tr>")[0]
    ran_row = html.split(f'data-ladder="{ran.pk}"')[1].split("</tr>")[0]
    assert ">2 <span" in idle_row and "declared" in idle_row  # the shared one climbs once
    assert "never" in idle_row
    assert "ended" in ran_row and "<time" in ran_row
    found = owner_client.get(reverse("console:ladders"), {"q": "zet"})
    assert "zeta" in text_of(found) and "epsilon" not in text_of(found)
