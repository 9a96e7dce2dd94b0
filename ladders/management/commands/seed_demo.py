"""Demo data: two users, a platformer catalog, combinations in a group and a ready ladder, and
for the verify gate an evalset of the ladder's rungs with runs journaled before and after an
applied LLM-authored proposal, which the gate measures once the demo's first Run has pushed ten
runs (``after_grains: 10``), plus a human-authored one it skips and says why.

Idempotent: running it again changes nothing that exists.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from evalsets import services as evalsets
from evalsets.models import Proposal
from ladders import services
from ladders.models import Ladder
from loopweb.runs.models import (
    Case,
    CaseVersion,
    Combination,
    CoverageGroup,
    GGConfiguration,
    GroupMember,
    ModelEntry,
    Role,
)

STEPS = [
    ("First steps", "godot"),
    ("Jump and land", "godot"),
    ("Moving platforms", "godot"),
    ("Collectibles and score", None),
    ("Enemies that patrol", "godot"),
    ("Checkpoints and lives", None),
    ("Scrolling level", "godot"),
    ("Boss fight", "godot"),
]
CHECKLIST = [
    ("boots", "The game starts without errors", True),
    ("controls", "The player moves and jumps with the keyboard", True),
    ("goal", "The level can be completed", True),
    ("feedback", "Score or progress is shown on screen", False),
    ("polish", "Sound or animation gives feedback", False),
    ("restart", "The level can be restarted", False),
]
MODELS = [
    ("orca-large", "Orcanet"),
    ("orca-small", "Orcanet"),
    ("quill-2", "Quillworks"),
    ("lumen-pro", "Lumen"),
    ("lumen-mini", "Lumen"),
    ("basalt-7b", "Basalt"),
]
#: The evalset's runs journaled before the proposals (days ago, passed, failed): the newest is
#: the baseline.
BEFORE = [(3, 24, 6), (2, 27, 5), (1, 29, 4)]
#: The run journaled after the apply: six rung slots fewer passed, past the tolerance of 3.
AFTER = (23, 7)
MEASURED = "Shorter system prompt for the coder"
SKIPPED = "Raise the build timeout to ten minutes"
HARNESSES = [
    ("aider", "orca-large"),
    ("aider", "quill-2"),
    ("openhands", "orca-small"),
    ("openhands", "lumen-pro"),
    ("codex-cli", "lumen-mini"),
    ("codex-cli", "basalt-7b"),
]


class Command(BaseCommand):
    help = "Create the demo users, catalog, combinations and the 'Platformer climb' ladder."

    @transaction.atomic
    def handle(self, **options):
        owner = self.user("demo", Role.OWNER, staff=True)
        reviewer = self.user("reviewer", Role.REVIEWER)
        self.user("fleet", Role.DRIVER, password=None)
        for name, provider in MODELS:
            ModelEntry.objects.get_or_create(
                name=name, defaults={"provider": provider, "created_by": owner}
            )
        ingested = timezone.now() - timedelta(days=3)
        rungs = self.platformer_rungs(owner, ingested)
        self.cases_off_the_ladder(owner, ingested)
        group = self.frontier_group(owner, self.combinations(owner))
        if not Ladder.objects.filter(owner=owner, name="Platformer climb").exists():
            services.save_ladder(owner=owner, data=platformer_climb(rungs, group, reviewer))
        self.verify_gate(owner, rungs)
        self.stdout.write("demo data ready: owner demo/demo, reviewer reviewer/reviewer")

    def platformer_rungs(self, owner, ingested) -> list[dict]:
        """A case (version 1, the checklist) for each of ``STEPS``, and the ladder's rung for it."""
        rungs = []
        for number, (title, engine) in enumerate(STEPS, start=1):
            case = self.case(f"platformer-{number}", f"Platformer {number}: {title}", owner)
            CaseVersion.objects.get_or_create(
                case=case,
                version="1",
                defaults={
                    "ingested_at": ingested,
                    "variants": ["default"],
                    "engines": ["godot"],
                    "checklist": checklist(),
                    "created_by": owner,
                },
            )
            rungs.append(
                {
                    "case": case.slug,
                    "version": "1",
                    "variant": "default",
                    "engine": engine,
                    "runs": 2 if number == 8 else None,
                }
            )
        return rungs

    def cases_off_the_ladder(self, owner, ingested) -> None:
        """A legacy-rated platformer case and a performance case, in the catalog only."""
        legacy = self.case("platformer-classic", "Platformer classic (legacy rating)", owner)
        CaseVersion.objects.get_or_create(
            case=legacy,
            version="0",
            defaults={
                "ingested_at": ingested,
                "legacy": True,
                "variants": ["default"],
                "checklist": checklist(),
                "created_by": owner,
            },
        )
        perf = self.case("frame-budget", "Frame budget under load", owner, kind="performance")
        CaseVersion.objects.get_or_create(
            case=perf,
            version="1",
            defaults={"ingested_at": ingested, "variants": ["default"], "created_by": owner},
        )

    def combinations(self, owner) -> list[Combination]:
        """A harness combination for each of ``HARNESSES``, then a gg one (planner and coder)."""
        providers = dict(MODELS)
        combos = []
        for harness, model in HARNESSES:
            combination = Combination.objects.filter(
                key=f"{harness}|{model}|{providers[model]}"
            ).first() or Combination.objects.create(
                kind="harness",
                harness=harness,
                model=model,
                provider=providers[model],
                created_by=owner,
            )
            combos.append(combination)
        configuration, _ = GGConfiguration.objects.get_or_create(
            name="gg planner+coder", defaults={"roles": ["planner", "coder"], "created_by": owner}
        )
        gg = Combination(
            kind="gg",
            configuration_id=configuration.pk,
            bindings={"planner": "orca-large", "coder": "lumen-mini"},
            created_by=owner,
        )
        gg = Combination.objects.filter(key=gg.compute_key()).first() or (gg.save() or gg)
        combos.append(gg)
        return combos

    def frontier_group(self, owner, combos: list[Combination]) -> CoverageGroup:
        """The "Frontier models" group; its members, in order, when it is created."""
        group, created = CoverageGroup.objects.get_or_create(owner=owner, name="Frontier models")
        if created:
            GroupMember.objects.bulk_create(
                GroupMember(group=group, combination=c, position=i) for i, c in enumerate(combos)
            )
        return group

    def verify_gate(self, owner, rungs):
        """An evalset of the ladder's rungs, three runs journaled before the proposals and one
        after the apply; the LLM-authored proposal is measured after ten pushed runs."""
        pins = [{k: rung[k] for k in ("case", "version", "variant", "engine")} for rung in rungs]
        evalset, created = evalsets.create_evalset(
            name="Platformer rungs", pins=pins, created_by=owner
        )
        if created:
            now = timezone.now()
            for days, passed, failed in BEFORE:
                evalsets.journal_run(
                    evalset=evalset,
                    summary=summary(passed, failed),
                    journaled_at=now - timedelta(days=days),
                    journaled_by=owner,
                )
        policy = {
            "hash": evalset.hash,
            "field": "passed",
            "higher_is_better": True,
            "checkpoints": [{"after_grains": 10}, {"after_ms": 7 * 24 * 3600 * 1000}],
            "min_effect": {"count": 3},
        }
        applied = []
        for title, authored_by in ((MEASURED, "llm"), (SKIPPED, "human")):
            if Proposal.objects.filter(owner=owner, title=title).exists():
                continue
            proposal = evalsets.create_proposal(
                owner=owner,
                title=title,
                authored_by=authored_by,
                applicable=True,
                outcome_evalset=policy,
            )
            applied.append(evalsets.apply_proposal(proposal=proposal))
        if applied:
            evalsets.journal_run(evalset=evalset, summary=summary(*AFTER), journaled_by=owner)

    def user(self, username, role, staff=False, password=""):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(
                username=username,
                password=username if password is not None else None,
                is_staff=staff,
                is_superuser=staff,
            )
        if user.account.role != role:
            user.account.role = role
            user.account.save()
        return user

    def case(self, slug, title, owner, kind="functional"):
        case, _ = Case.objects.get_or_create(
            slug=slug, defaults={"title": title, "kind": kind, "created_by": owner}
        )
        return case


def checklist() -> list[dict]:
    """The demo cases' checklist, as a case version holds it."""
    return [{"id": i, "text": t, "critical": c} for i, t, c in CHECKLIST]


def platformer_climb(rungs: list[dict], group: CoverageGroup, reviewer) -> dict:
    """The 'Platformer climb' ladder as ``services.save_ladder`` takes it: the rungs, climbed by
    the group's combinations, reviewed by ``reviewer``."""
    return {
        "name": "Platformer climb",
        "rungs": rungs,
        "groups": [group.pk],
        "combinations": [],
        "gate": {
            "floor": "passable",
            "threshold": {"count": 1},
            "unloadedCountsAsBroken": True,
            "earlyStop": False,
        },
        "runsPerCell": 1,
        "runsInFlightLimit": 6,
        "retryCount": 1,
        "outerAxis": "rung",
        "reviewers": [reviewer.pk],
    }


def summary(passed: int, failed: int) -> dict:
    """An evalset run's summary as a journaled dispatch gives it (``ladders.journal``)."""
    return {
        "passed": passed,
        "failed": failed,
        "total": passed + failed,
        "error_rate": round(failed / (passed + failed), 4),
    }
