"""Demo data: two users, a platformer catalog, combinations in a group and a ready ladder.

Idempotent: running it again changes nothing that exists.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

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
        providers = dict(MODELS)
        for name, provider in MODELS:
            ModelEntry.objects.get_or_create(
                name=name, defaults={"provider": provider, "created_by": owner}
            )
        checklist = [{"id": i, "text": t, "critical": c} for i, t, c in CHECKLIST]
        ingested = timezone.now() - timedelta(days=3)
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
                    "checklist": checklist,
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
        legacy = self.case("platformer-classic", "Platformer classic (legacy rating)", owner)
        CaseVersion.objects.get_or_create(
            case=legacy,
            version="0",
            defaults={
                "ingested_at": ingested,
                "legacy": True,
                "variants": ["default"],
                "checklist": checklist,
                "created_by": owner,
            },
        )
        perf = self.case("frame-budget", "Frame budget under load", owner, kind="performance")
        CaseVersion.objects.get_or_create(
            case=perf,
            version="1",
            defaults={"ingested_at": ingested, "variants": ["default"], "created_by": owner},
        )
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
        group, created = CoverageGroup.objects.get_or_create(owner=owner, name="Frontier models")
        if created:
            GroupMember.objects.bulk_create(
                GroupMember(group=group, combination=c, position=i) for i, c in enumerate(combos)
            )
        if not Ladder.objects.filter(owner=owner, name="Platformer climb").exists():
            services.save_ladder(
                owner=owner,
                data={
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
                },
            )
        self.stdout.write("demo data ready: owner demo/demo, reviewer reviewer/reviewer")

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
