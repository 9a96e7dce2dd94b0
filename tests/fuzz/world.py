"""A small deployment with one object of every kind, shared by the fuzzer and the authorization
matrix: two owners (each with a running ladder), a reviewer the first owner shares a ladder
with, a driver holding a job, runs (published and not), a review, signals, an evalset, a
proposal and a webhook with one delivery. Every object is written through the services, as
the API would write it.
"""

from dataclasses import dataclass, field

from django.utils import timezone

from evalsets import services as evalset_services
from ladders import services as ladder_services
from loopweb.runs import services as run_services
from loopweb.runs.models import ApiToken, Job, JobStatus, Role, Run
from loopweb.webhooks import services as webhook_services
from signals_app import services as signal_services
from tests.factories import (
    CaseFactory,
    CaseVersionFactory,
    CombinationFactory,
    CoverageGroupFactory,
    GGConfigurationFactory,
    UserFactory,
    gg_combination,
)
from tests.ladders.builders import PERFECT, config, rung
from tests.runs.helpers import pin_of

#: The five callers of the matrix and of the fuzzer, in a fixed order.
ROLES = ("anonymous", "owner", "other_owner", "reviewer", "driver")


@dataclass
class World:
    users: dict
    tokens: dict
    ladder: object
    other_ladder: object
    version: object
    combination: object
    other_combination: object
    gg_configuration: object
    group: object
    model_entry: object
    queued_job: object
    leased_job: object
    run: object
    published_run: object
    other_run: object
    evalset: object
    proposal: object
    extra: dict = field(default_factory=dict)

    def auth_headers(self, role: str) -> dict:
        if role == "anonymous":
            return {}
        return {"Authorization": f"Token {self.tokens[role]}"}

    def path_values(self) -> dict[str, dict[str, list]]:
        """Known values for the path parameters of each URL prefix: the fuzzer mixes them with
        generated ones so requests reach real objects, not only 404s."""
        return {
            "/api/ladders/": {"id": [self.ladder.pk, self.other_ladder.pk]},
            "/api/runs/": {"id": [self.run.pk, self.published_run.pk, self.other_run.pk]},
            "/api/jobs/": {"id": [self.queued_job.pk, self.leased_job.pk]},
            "/api/driver/jobs/": {"job_id": [self.leased_job.pk, self.queued_job.pk]},
            "/api/groups/": {"id": [self.group.pk]},
            "/api/models/": {"id": [self.model_entry.pk]},
            "/api/gg-configurations/": {"id": [self.gg_configuration.pk]},
            "/api/combinations/": {"id": [self.combination.pk, self.other_combination.pk]},
            "/api/proposals/": {"id": [self.proposal.pk]},
            "/api/cases/": {"slug": [self.version.case.slug]},
            "/api/evalsets/": {"hash": [self.evalset.hash]},
            "/api/webhooks/": {
                "id": [self.extra["webhook"].pk],
                "delivery_id": [self.extra["delivery"].pk],
            },
        }


def _ladder(owner, versions, combos, reviewers=()):
    rungs = [rung(v) for v in versions]
    data = config(
        rungs=rungs,
        combinations=[c.pk for c in combos],
        reviewers=list(reviewers),
        runsInFlightLimit=4,
    )
    ladder = ladder_services.save_ladder(owner=owner, data=data)
    ladder_services.start_dispatch(ladder=ladder)
    return ladder


def build_world() -> World:
    owner = UserFactory(username="olive", role=Role.OWNER)
    other = UserFactory(username="oscar", role=Role.OWNER)
    reviewer = UserFactory(username="rita", role=Role.REVIEWER)
    driver = UserFactory(username="drv", role=Role.DRIVER)
    users = {"owner": owner, "other_owner": other, "reviewer": reviewer, "driver": driver}
    tokens = {role: ApiToken.objects.issue(user)[1] for role, user in users.items()}

    version = CaseVersionFactory(case=CaseFactory(slug="jump-1"), version="1")
    second = CaseVersionFactory(case=CaseFactory(slug="jump-2"), version="1")
    CaseVersionFactory(case=CaseFactory(slug="classic-1"), version="0", legacy=True)
    CaseVersionFactory(case=CaseFactory(slug="frames-1", kind="performance"), version="1")
    # The owner made the catalog: only they (and staff) change it.
    combination = CombinationFactory(
        harness="aider", model="gpt-x", provider="acme", created_by=owner
    )
    other_combination = CombinationFactory(
        harness="aider", model="gpt-y", provider="acme", created_by=owner
    )
    configuration = GGConfigurationFactory(name="planner+coder", created_by=owner)
    gg = gg_combination(configuration, {"planner": "gpt-x", "coder": "gpt-y"}, created_by=owner)
    group = CoverageGroupFactory(owner=owner, combinations=[combination, gg])

    ladder = _ladder(owner, [version, second], [combination, gg], reviewers=[reviewer.pk])
    other_ladder = _ladder(other, [second], [other_combination])

    # The driver takes two of the owner's ladder jobs: one gets its run (published as it
    # completes), one stays leased.
    claimed = run_services.claim_jobs(driver=driver, limit=2)
    run_services.push_run(
        pushed_by=driver,
        job_id=claimed[0].pk,
        outcome="completed",
        record=PERFECT,
        finished_at=timezone.now(),
    )
    leased_job = claimed[1]
    # The owner's unpublished run: launched outside Loopweb for a cell of the ladder's second
    # rung, which no climber has reached, so no pass publishes it; the ladder's reviewers read
    # it through the ladder.
    run, _ = run_services.push_run(
        pushed_by=owner,
        pin=pin_of(second),
        combination=combination,
        outcome="completed",
        record=PERFECT,
        finished_at=timezone.now(),
    )
    queued_job = run_services.launch_by_hand(
        owner=owner, pin=pin_of(version), combination=combination
    )
    published_run, _ = run_services.push_run(
        pushed_by=owner,
        pin=pin_of(second),
        combination=other_combination,
        outcome="completed",
        record=PERFECT,
        finished_at=timezone.now(),
        commit="abc123",
    )
    Run.objects.filter(pk=published_run.pk).update(published=True)
    other_run, _ = run_services.push_run(
        pushed_by=other,
        pin=pin_of(second),
        combination=other_combination,
        outcome="completed",
        record=PERFECT,
        finished_at=timezone.now(),
    )
    run_services.review_run(run=run, reviewer=reviewer, aesthetic_rating=4, writeup="tidy")
    signal_services_add(run, owner)

    evalset, _ = evalset_services.create_evalset(
        name="core",
        pins=[{"case": "jump-1", "version": "1", "variant": "default", "engine": None}],
        created_by=owner,
    )
    evalset_services.journal_run(evalset=evalset, summary={"passed": 3, "failed": 1})
    proposal = evalset_services.create_proposal(
        owner=owner,
        title="Retry flaky builds once",
        authored_by="llm",
        applicable=True,
        outcome_evalset={"hash": evalset.hash, "field": "passed", "higher_is_better": True},
    )
    webhook = webhook_services.create_subscription(
        owner=owner,
        url="https://hooks.example.com/loopweb",
        events=["dispatch.finished"],
        active=True,
        format="json",
        deployment_wide=False,
    )
    delivery = webhook_services.ping(subscription=webhook)
    assert Job.objects.filter(pk=leased_job.pk, status=JobStatus.PENDING).exists()
    return World(
        users=users,
        tokens=tokens,
        ladder=ladder,
        other_ladder=other_ladder,
        version=version,
        combination=combination,
        other_combination=other_combination,
        gg_configuration=configuration,
        group=group,
        model_entry=_model_entry("gpt-x"),
        queued_job=queued_job,
        leased_job=leased_job,
        run=run,
        published_run=published_run,
        other_run=other_run,
        evalset=evalset,
        proposal=proposal,
        extra={"webhook": webhook, "delivery": delivery},
    )


def _model_entry(name):
    from loopweb.runs.models import ModelEntry

    return ModelEntry.objects.get(name=name)


def signal_services_add(run, user) -> None:
    """One verdict signal on the run, as a CI system would post it."""
    signal_services.add_signals(
        run=run,
        body={
            "id": "ci-1",
            "kind": "verdict",
            "name": "tests",
            "value": "pass",
            "observed_at": timezone.now().isoformat(),
            "tier": "verified",
        },
        recorded_by=user,
    )
