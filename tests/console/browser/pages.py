"""A console with something on every page, for the browser tests that visit them all: a ladder
that ran twice (two history records to compare; one climber failing rung 2), a run with metrics,
signals, a checklist and a long review, a group, an evalset with a proposal the verify gate
measured, and a webhook. ``console_pages`` names each page's address."""

from dataclasses import dataclass

from django.urls import reverse

from ladders import services
from loopweb.history.models import DispatchRecord
from loopweb.runs import services as run_services
from loopweb.runs.models import Run
from tests.evalsets.helpers import apply, journal, make_evalset, propose, t, verify
from tests.factories import CoverageGroupFactory
from tests.history.helpers import PAID, PAID_BROKEN, costing
from tests.ladders.builders import climbers, make_ladder, versions, work
from tests.tasks import run_queued_tasks
from tests.webhooks.helpers import subscribe

WRITEUP = (
    "The jump arc is right and the camera follows, but the second platform's collider is a few "
    "pixels short: the character clips through at the far edge. Otherwise a clean build with "
    "a readable level layout and responsive controls; the score counter overlaps the pause "
    "button at narrow widths."
)


@dataclass
class World:
    ladder: object
    run: Run
    records: list[int]
    proposal: object
    evalset: object
    group: object
    webhook: object


def console_world(owner, reviewer, driver) -> World:
    models = climbers(3, prefix="claude-sonnet-4-5-with-a-long-name-")
    ladder = make_ladder(
        owner,
        versions(6, prefix="platformer"),
        models,
        name="Platformer climb",
        reviewers=[reviewer.pk],
    )
    first, rest = models[0], models[1:]

    def record(job):
        if job.combination_id == first.pk and job.case == "platformer-2":
            return PAID_BROKEN
        return costing(PAID, 123_456, 1_234_567, 98_765, 183_000)

    for _ in range(2):
        services.start_dispatch(ladder=ladder, by=owner)
        work(driver, run_queued_tasks, record)
    run_queued_tasks()
    run = Run.objects.filter(job__combination=rest[0]).order_by("pk").first()
    run_services.review_run(
        run=run, reviewer=reviewer, aesthetic_rating=4, writeup=WRITEUP, verdict="accept"
    )
    evalset = make_evalset(name="platformer-core")
    journal(evalset, t(0), passed=30, failed=2)
    journal(evalset, t(1), passed=31, failed=1)
    proposal = propose(owner, evalset, created_at=t(2), title="Retry flaky builds once")
    apply(proposal, t(3))
    journal(evalset, t(4), passed=32, failed=0)
    verify(proposal)
    group = CoverageGroupFactory(name="Frontier models", owner=owner, combinations=models)
    webhook = subscribe(owner, "https://hooks.example.com/loopweb")
    records = list(
        DispatchRecord.objects.filter(ladder=ladder).order_by("pk").values_list("pk", flat=True)
    )
    return World(ladder, run, records, proposal, evalset, group, webhook)


def console_pages(world: World) -> dict[str, str]:
    """Each console page's address, by name."""
    ladder = world.ladder.pk
    first_record, last_record = world.records[0], world.records[-1]
    second_rung = world.ladder.rungs.order_by("position")[1].rung_id
    return {
        "ladders": reverse("console:ladders"),
        "board": reverse("console:board", args=[ladder]),
        "slot": reverse("console:slot", args=[ladder, 0, second_rung]),
        "run": reverse("console:run-page", args=[world.run.pk]),
        "queue": reverse("console:queue", args=[ladder]),
        "history": reverse("history:history", args=[ladder]),
        "record": reverse("history:record", args=[ladder, first_record]),
        # The latest record (whose dispatch's standing keeps its slots' runs), a slot open.
        "record slot": (
            f"{reverse('history:record', args=[ladder, last_record])}?slot=0/{second_rung}"
        ),
        "record chart": f"{reverse('history:history', args=[ladder])}?record={first_record}",
        "compare": f"{reverse('history:compare', args=[ladder])}?a={first_record}&b={last_record}",
        "editor": reverse("console:ladder-edit", args=[ladder]),
        "new ladder": reverse("console:ladder-new"),
        "groups": reverse("console:groups"),
        "group": reverse("console:group", args=[world.group.pk]),
        "combinations": reverse("console:combinations"),
        "rule": reverse("console:acceptance-rule"),
        "evalsets": reverse("evalsets:evalsets"),
        "evalset": reverse("evalsets:evalset", args=[world.evalset.hash]),
        "proposals": reverse("evalsets:proposals"),
        "proposal": reverse("evalsets:proposal", args=[world.proposal.pk]),
        "webhooks": reverse("webhooks_console:list"),
        "webhook": reverse("webhooks_console:detail", args=[world.webhook.pk]),
        "budgets": reverse("console:budgets"),
    }
