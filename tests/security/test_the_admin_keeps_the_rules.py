"""The admin keeps the product's rules. What the services own — runs, jobs, reviews, signals,
pinned case versions, the verify gate's journaled runs and results, dispatch records, webhook
deliveries — staff read in the admin (lists, filters, search, every field on the change page,
links between related rows) but cannot add, change or delete there: a staff POST changes no
row. What the admin does do goes through the services the console and the API call: cancelling
jobs stamps their cells and feeds their dispatches, as ``POST /api/jobs/{id}/cancel`` does."""

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import Permission
from django.db.models import Model
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from evalsets.models import AdvisoryFlag, EvalsetRun, OutcomeResult, Proposal, RevertDraft
from ladders import services as ladder_services
from ladders.tasks import launch_pass
from loopweb.history.models import Activity, DispatchRecord
from loopweb.runs import services as run_services
from loopweb.runs.models import Change, Job, Review
from loopweb.webhooks import services as webhook_services
from loopweb.webhooks.models import Delivery, Subscription
from signals_app.models import Signal
from tests.console.helpers import Browser, form_data, text_of
from tests.evalsets.helpers import regressed_and_costlier
from tests.factories import CaseVersionFactory, CombinationFactory, UserFactory
from tests.fuzz.world import signal_services_add
from tests.ladders.builders import climbers, make_ladder, queued, versions
from tests.runs.helpers import claim, finish, hand_job

pytestmark = pytest.mark.django_db


# -- what the services own ----------------------------------------------------------------------


class Cast(SimpleNamespace):
    """The standing users, and each kind of row built once, through the services."""

    def chain(self):
        """A hand-launched job that failed and was retried; its retry's completed run (rated,
        counted), reviewed by the job's owner, with one CI signal."""
        if not hasattr(self, "_chain"):
            version, combination = CaseVersionFactory(), CombinationFactory()
            first = claim(self.driver, hand_job(self.owner, version, combination, retry_count=1))
            run_services.fail_job(job_id=first.pk, driver=self.driver, failure="infrastructure")
            retry = Job.objects.get(retry_of=first)
            run = finish(self.driver, retry)
            review = run_services.review_run(
                run=run, reviewer=self.owner, aesthetic_rating=4, writeup="tidy", verdict="accept"
            )
            signal_services_add(run, self.owner)
            first.refresh_from_db()
            self._chain = SimpleNamespace(
                version=version, first=first, retry=retry, run=run, review=review
            )
        return self._chain

    def gate(self):
        if not hasattr(self, "_gate"):
            self._gate, _ = regressed_and_costlier(self.owner)
        return self._gate

    def history(self):
        if not hasattr(self, "_ladder"):
            ladder = make_ladder(self.owner, versions(1, prefix="h"), climbers(1, prefix="h"))
            ladder_services.start_dispatch(ladder=ladder, by=self.owner)
            ladder_services.stop_dispatch(ladder=ladder, by=self.owner)
            self.run_tasks()
            self._ladder = ladder
        return self._ladder

    def delivery(self):
        subscription = webhook_services.create_subscription(
            owner=self.owner,
            url="https://hooks.example.com/loopweb",
            events=["dispatch.finished"],
            active=True,
            format="json",
            deployment_wide=False,
        )
        return webhook_services.ping(subscription=subscription)


@dataclass(frozen=True)
class Owned:
    """A kind of row the services own, one of them, and what a staff user might post to it."""

    make: Callable[[Cast], Model]
    tamper: dict
    #: Fields the change page leaves out on purpose (with the reason where they are left out).
    hidden: frozenset = field(default_factory=frozenset)


OWNED = {
    "job": Owned(
        lambda c: c.chain().first,
        {"status": "completed", "cell_key": "forged", "retry_count": "9", "failure": ""},
    ),
    "run": Owned(
        lambda c: c.chain().run,
        {
            "counted": "",
            "record": "{}",
            "validator_rating": "broken",
            "cell_key": "forged",
            "outcome": "hung",
        },
    ),
    "review": Owned(
        lambda c: c.chain().review,
        {"reviewer": "1", "aesthetic_rating": "1", "verdict": "reject", "writeup": "forged"},
    ),
    "signal": Owned(
        lambda c: Signal.objects.get(run=c.chain().run, name="tests"),
        {"name": "forged", "value": '"fail"', "tier": "reported"},
    ),
    "case version": Owned(
        lambda c: c.chain().version,
        {"checklist": "[]", "legacy": "on", "version": "9", "variants": '["hard"]'},
    ),
    "evalset run": Owned(
        lambda c: EvalsetRun.objects.filter(evalset=c.gate().evalset).first(),
        {"summary": '{"passed": 99, "failed": 0}'},
    ),
    "outcome result": Owned(
        lambda c: OutcomeResult.objects.get(proposal=c.gate()),
        {"verdict": "held", "current": "99", "baseline": "1"},
    ),
    "revert draft": Owned(
        lambda c: RevertDraft.objects.get(proposal=c.gate()), {"reason": "forged"}
    ),
    "advisory flag": Owned(
        lambda c: AdvisoryFlag.objects.get(proposal__evalset=c.gate().evalset), {"reason": "forged"}
    ),
    "dispatch record": Owned(
        lambda c: DispatchRecord.objects.get(ladder=c.history()),
        {"configuration": "forged", "totals": "{}"},
        hidden=frozenset({"slot_totals"}),  # thousands of cells: the console and the API show them
    ),
    "activity": Owned(
        lambda c: Activity.objects.filter(ladder=c.history()).first(), {"action": "stop"}
    ),
    "delivery": Owned(
        lambda c: c.delivery(),
        {"status": "delivered", "response_code": "200"},
        hidden=frozenset({"event"}),  # shown as its event's id and type
    ),
}


@pytest.fixture
def cast(owner, reviewer, driver, run_tasks):
    return Cast(owner=owner, reviewer=reviewer, driver=driver, run_tasks=run_tasks)


@pytest.fixture
def staff_browser(staff):
    return Browser(staff)


@pytest.fixture(params=list(OWNED), ids=list(OWNED))
def owned(request, cast):
    spec = OWNED[request.param]
    obj = spec.make(cast)
    assert obj is not None
    return spec, obj


def admin_url(obj_or_model, view: str, *args) -> str:
    opts = obj_or_model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def row_of(obj: Model) -> dict:
    return type(obj).objects.filter(pk=obj.pk).values().get()


# -- no change, no add, no delete ---------------------------------------------------------------


def test_a_staff_post_to_the_change_form_changes_nothing(staff_browser, owned):
    spec, obj = owned
    before = row_of(obj)
    url = admin_url(obj, "change", obj.pk)
    assert staff_browser.get(url).status_code == 200

    answer = staff_browser.submit(url, {**spec.tamper, "_save": "Save"})

    assert answer.status_code == 403
    assert b"CSRF" not in answer.content
    assert row_of(obj) == before


def test_add_and_delete_are_refused(staff_browser, owned):
    _, obj = owned
    before = row_of(obj)
    add = admin_url(obj, "add")
    assert staff_browser.get(add).status_code == 403
    assert staff_browser.submit(add, {}).status_code == 403
    delete = admin_url(obj, "delete", obj.pk)
    assert staff_browser.get(delete).status_code == 403
    assert staff_browser.submit(delete, {"post": "yes"}).status_code == 403
    listing = admin_url(obj, "changelist")
    staff_browser.submit(listing, {"action": "delete_selected", ACTION_CHECKBOX_NAME: [obj.pk]})
    staff_browser.submit(
        listing, {"action": "delete_selected", ACTION_CHECKBOX_NAME: [obj.pk], "post": "yes"}
    )
    assert row_of(obj) == before
    page = staff_browser.get(listing)
    assert add not in page.content.decode()
    assert "delete_selected" not in page.content.decode()


# -- still read ---------------------------------------------------------------------------------


def test_the_change_page_shows_every_field_read_only(staff_browser, owned):
    spec, obj = owned
    page = staff_browser.get(admin_url(obj, "change", obj.pk))
    html = page.content.decode()
    assert page.status_code == 200
    shown = [f.name for f in type(obj)._meta.concrete_fields if not f.primary_key]
    missing = [name for name in shown if name not in spec.hidden and f"field-{name}" not in html]
    assert not missing
    editable = [name for name in shown if f'name="{name}"' in html]
    assert not editable
    assert 'name="_save"' not in html and 'name="_continue"' not in html


def test_the_changelist_lists_filters_and_searches(staff_browser, owned):
    _, obj = owned
    listing = admin_url(obj, "changelist")
    page = staff_browser.get(listing)
    assert page.status_code == 200
    assert admin_url(obj, "change", obj.pk) in page.content.decode()
    assert staff_browser.get(listing, {"q": "a"}).status_code == 200
    changelist = page.context["cl"]
    for spec in changelist.filter_specs:
        for choice in spec.choices(changelist):
            filtered = staff_browser.get(listing + choice["query_string"])
            assert filtered.status_code == 200, (spec.title, choice["query_string"])


def test_related_rows_link_to_each_other(staff_browser, cast):
    chain = cast.chain()
    signal = Signal.objects.get(run=chain.run, name="tests")

    def links(obj) -> str:
        page = staff_browser.get(admin_url(obj, "change", obj.pk))
        assert page.status_code == 200
        return page.content.decode()

    job_page = links(chain.first)  # to its retry
    assert f'href="{admin_url(chain.retry, "change", chain.retry.pk)}"' in job_page
    retry_page = links(chain.retry)  # to its run, and to the job it retries
    assert f'href="{admin_url(chain.run, "change", chain.run.pk)}"' in retry_page
    assert f'href="{admin_url(chain.first, "change", chain.first.pk)}"' in retry_page
    run_page = links(chain.run)  # to its job, its reviews, its signals, its console page
    assert f'href="{admin_url(chain.retry, "change", chain.retry.pk)}"' in run_page
    assert f'href="{admin_url(chain.review, "change", chain.review.pk)}"' in run_page
    assert f"{admin_url(Signal, 'changelist')}?run__id__exact={chain.run.pk}" in run_page
    assert reverse("console:run-page", args=[chain.run.pk]) in run_page
    for obj in (chain.review, signal):
        assert f'href="{admin_url(chain.run, "change", chain.run.pk)}"' in links(obj)
    version_page = links(chain.version)
    assert f'href="{admin_url(chain.version.case, "change", chain.version.case_id)}"' in (
        version_page
    )


def test_a_case_page_shows_its_versions_read_only(staff_browser, cast):
    version = cast.chain().version
    before = row_of(version)
    url = admin_url(version.case, "change", version.case_id)
    page = staff_browser.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert version.version in html
    assert 'name="versions-0-checklist"' not in html
    assert 'name="versions-0-DELETE"' not in html
    data = form_data(page, "case_form")
    data |= {"versions-0-checklist": "[]", "versions-0-legacy": "on", "versions-0-DELETE": "on"}
    staff_browser.submit(url, data)
    assert row_of(version) == before


def test_only_a_name_or_a_title_is_edited_on_the_gates_own_rows(staff_browser, cast):
    """Evalsets and proposals keep their names and titles editable (docs/decisions/0162); what
    the services wrote (pins, hash, policy, applied and closed, the gate's outcome) is not in
    the form, and neither can be deleted: that would take the gate's results with them."""
    proposal = cast.gate()
    for obj, name in ((proposal.evalset, "name"), (proposal, "title")):
        before = row_of(obj)
        url = admin_url(obj, "change", obj.pk)
        page = staff_browser.get(url)
        assert page.status_code == 200
        data = form_data(page, f"{obj._meta.model_name}_form")
        assert set(data) & {f.name for f in obj._meta.concrete_fields} == {name}
        data |= {
            name: "Renamed",
            "hash": "0" * 64,
            "pins": "[]",
            "gate_outcome": "no_baseline",
            "verify_complete": "",
            "applied_at_0": "",
            "closed_at_0": "",
            "outcome_evalset": "{}",
        }
        answer = staff_browser.submit(url, data)
        assert answer.status_code == 302, text_of(answer)[:500]
        assert row_of(obj) == {**before, name: "Renamed"}
        assert staff_browser.submit(
            admin_url(obj, "delete", obj.pk), {"post": "yes"}
        ).status_code == (403)
        assert type(obj).objects.filter(pk=obj.pk).exists()
    assert staff_browser.get(admin_url(Proposal, "add")).status_code == 403


# -- the actions call the services --------------------------------------------------------------


@pytest.fixture
def dispatched(owner, driver, run_tasks):
    """A running ladder's two jobs, claimed by a driver: one still waits to start, the other
    completed. Its passes have run."""
    ladder = make_ladder(owner, versions(1, prefix="cx"), climbers(2, prefix="cx"), retryCount=0)
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    run_tasks()
    waiting, done = queued(ladder)
    finish(driver, done)
    run_tasks()
    waiting.refresh_from_db()
    done.refresh_from_db()
    assert (waiting.status, done.status) == ("pending", "completed")
    return SimpleNamespace(ladder=ladder, waiting=waiting, done=done)


def passes_queued(ladder) -> int:
    tasks = DBTaskResult.objects.ready().filter(task_path=launch_pass.module_path)
    return sum(1 for task in tasks if task.args_kwargs["args"] == [ladder.pk])


def cancel(browser, jobs):
    return browser.submit(
        reverse("admin:runs_job_changelist"),
        {"action": "cancel_jobs", ACTION_CHECKBOX_NAME: [job.pk for job in jobs]},
        follow=True,
    )


def test_cancelling_jobs_in_the_admin_goes_through_the_service(
    staff_browser, dispatched, run_tasks
):
    waiting, done = dispatched.waiting, dispatched.done
    stamps = Change.objects.filter(key=waiting.cell_key).count()
    assert passes_queued(dispatched.ladder) == 0

    page = cancel(staff_browser, [waiting, done])

    text = text_of(page)
    assert "1 job cancelled." in text
    assert f"Not cancelled: job {done.pk} is already completed." in text
    waiting.refresh_from_db()
    assert (waiting.status, waiting.cancel_cause) == ("canceled", "hand")
    assert waiting.finished_at is not None
    assert Job.objects.get(pk=done.pk).status == "completed"
    # What the service does beside: the cell's change stamp (boards read afresh) and a launch
    # pass for the dispatch (a slot cancelled by hand is launched again).
    assert Change.objects.filter(key=waiting.cell_key).count() > stamps
    assert passes_queued(dispatched.ladder) == 1
    run_tasks()
    relaunched = Job.objects.filter(cell_key=waiting.cell_key).exclude(pk=waiting.pk)
    assert [job.status for job in relaunched] == ["queued"]


def test_staff_who_may_only_view_jobs_cannot_cancel_them(dispatched):
    viewer = UserFactory(username="vera")
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_job"))
    browser = Browser(viewer)
    listing = browser.get(reverse("admin:runs_job_changelist"))
    assert listing.status_code == 200 and "cancel_jobs" not in listing.content.decode()
    page = browser.get(admin_url(dispatched.waiting, "change", dispatched.waiting.pk))
    assert page.status_code == 200 and dispatched.waiting.cell_key in page.content.decode()

    cancel(browser, [dispatched.waiting])

    assert Job.objects.get(pk=dispatched.waiting.pk).status == "pending"


def test_deleting_a_webhook_still_takes_its_delivery_log_with_it(staff_browser, cast):
    """Deliveries cannot be deleted one by one; deleting their webhook (as the API and the
    console do, through the service) still removes them."""
    delivery = cast.delivery()
    url = admin_url(delivery.subscription, "delete", delivery.subscription_id)
    page = staff_browser.get(url)
    assert page.status_code == 200 and b"permission to delete" not in page.content

    staff_browser.submit(url, {"post": "yes"})

    assert not Subscription.objects.filter(pk=delivery.subscription_id).exists()
    assert not Delivery.objects.filter(pk=delivery.pk).exists()


def test_reviews_are_not_written_in_anyones_name(staff_browser, cast, reviewer):
    run = cast.chain().run
    answer = staff_browser.submit(
        admin_url(Review, "add"),
        {"run": run.pk, "reviewer": reviewer.pk, "aesthetic_rating": "1", "writeup": "x"},
    )
    assert answer.status_code == 403
    assert not Review.objects.filter(reviewer=reviewer).exists()
    assert list(Review.objects.filter(run=run).values_list("reviewer", flat=True)) == [
        cast.owner.pk
    ]
