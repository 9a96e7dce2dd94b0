import datetime as dt

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

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

CHECKLIST = [
    {"id": "starts", "text": "The game starts", "critical": True},
    {"id": "jump", "text": "The player can jump", "critical": True},
    {"id": "score", "text": "Score is shown", "critical": False},
    {"id": "music", "text": "Music plays", "critical": False},
    {"id": "pause", "text": "Pause works", "critical": False},
]


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "pw")

    @factory.post_generation
    def role(user, create, extracted, **kwargs):
        if create:
            user.save()
            user.account.role = extracted or Role.OWNER
            user.account.save()


class CaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Case
        django_get_or_create = ["slug"]

    slug = factory.Sequence(lambda n: f"case-{n}")
    title = factory.LazyAttribute(lambda o: o.slug.replace("-", " ").title())
    kind = "functional"
    # Catalog entries have no creator unless a test names one: only staff may change those.
    created_by = None


class CaseVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CaseVersion

    case = factory.SubFactory(CaseFactory)
    version = "1"
    ingested_at = factory.LazyFunction(lambda: timezone.now() - dt.timedelta(days=1))
    legacy = False
    variants = factory.LazyFunction(lambda: ["default"])
    engines = factory.LazyFunction(list)
    checklist = factory.LazyFunction(lambda: [dict(i) for i in CHECKLIST])
    created_by = None


class ModelEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ModelEntry
        django_get_or_create = ["name"]

    name = factory.Sequence(lambda n: f"model-{n}")
    provider = "acme"
    launchable = True
    created_by = None


class CombinationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Combination
        django_get_or_create = ["key"]
        skip_postgeneration_save = True

    kind = "harness"
    harness = "aider"
    model = factory.Sequence(lambda n: f"model-{n}")
    provider = "acme"
    key = factory.LazyAttribute(lambda o: f"{o.harness}|{o.model}|{o.provider}")
    created_by = None

    @factory.post_generation
    def catalog(combination, create, extracted, **kwargs):
        """Put the combination's model in the catalog (launchable, by the combination's creator)
        unless told otherwise."""
        if create and extracted is not False and combination.kind == "harness":
            ModelEntryFactory(
                name=combination.model,
                provider=combination.provider,
                created_by=combination.created_by,
            )


class GGConfigurationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GGConfiguration

    name = factory.Sequence(lambda n: f"gg-{n}")
    roles = factory.LazyFunction(lambda: ["planner", "coder"])
    created_by = None


def gg_combination(
    configuration: GGConfiguration, bindings: dict[str, str], created_by=None
) -> Combination:
    for name in bindings.values():
        ModelEntryFactory(name=name, created_by=created_by)
    combination = Combination(
        kind="gg", configuration_id=configuration.pk, bindings=bindings, created_by=created_by
    )
    combination.save()
    return combination


class CoverageGroupFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CoverageGroup
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"group-{n}")
    owner = factory.SubFactory(UserFactory)

    @factory.post_generation
    def combinations(group, create, extracted, **kwargs):
        if create and extracted:
            GroupMember.objects.bulk_create(
                GroupMember(group=group, combination=c, position=i) for i, c in enumerate(extracted)
            )
