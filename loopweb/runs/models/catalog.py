from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from loopweb.runs.cells import gg_key, harness_key

from .fields import Named, user_reference

#: Versions, variants and engines are parts of a cell key, so they stay within a safe alphabet.
PIN_PART = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$",
    "Use 1-64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit.",
)


def creator():
    """Who created a catalog entry: only they or staff may change or delete it
    (``loopweb.runs.catalog.may_change``). Null for an entry created before creators were
    recorded, or whose creator's account was deleted: only staff may change those."""
    return user_reference()


class CaseKind(models.TextChoices):
    FUNCTIONAL = "functional"
    PERFORMANCE = "performance"
    GAME_JAM = "gameJam"


class Case(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=CaseKind.choices)
    created_by = creator()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class CaseVersion(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=64, validators=[PIN_PART])
    ingested_at = models.DateTimeField()
    legacy = models.BooleanField(default=False)
    variants = models.JSONField(default=list)
    engines = models.JSONField(default=list)
    checklist = models.JSONField(default=list)
    created_by = creator()

    class Meta:
        ordering = ["case__slug", "-ingested_at"]
        constraints = [
            models.UniqueConstraint(fields=["case", "version"], name="unique_case_version"),
        ]
        indexes = [models.Index(fields=["case", "-ingested_at"])]

    def __str__(self) -> str:
        return f"{self.case.slug}@{self.version}"

    @property
    def validator_rated(self) -> bool:
        return self.case.kind == CaseKind.FUNCTIONAL and not self.legacy


class ModelEntry(models.Model):
    """A model in the catalog; combinations name it, and only launchable ones launch."""

    name = models.CharField(max_length=200, unique=True)
    provider = models.CharField(max_length=100)
    launchable = models.BooleanField(default=True)
    created_by = creator()

    class Meta:
        ordering = ["name"]
        verbose_name = "model catalog entry"
        verbose_name_plural = "model catalog entries"

    def __str__(self) -> str:
        return self.name


class GGConfiguration(Named):
    roles = models.JSONField(default=list)
    created_by = creator()

    class Meta(Named.Meta):
        verbose_name = "gg configuration"


class CombinationKind(models.TextChoices):
    HARNESS = "harness"
    GG = "gg"


class Combination(models.Model):
    """A climber's shape: a harness with a model, or a gg configuration with bound models."""

    kind = models.CharField(max_length=8, choices=CombinationKind.choices)
    key = models.CharField(max_length=500, unique=True)
    harness = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=200, blank=True)
    provider = models.CharField(max_length=100, blank=True)
    # Kept as a plain id: the key and the pinned cells name it even after it is deleted.
    configuration_id = models.BigIntegerField(null=True, blank=True)
    bindings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = creator()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.key

    def save(self, *args, **kwargs):
        self.key = self.compute_key()
        super().save(*args, **kwargs)

    def compute_key(self) -> str:
        if self.kind == CombinationKind.GG:
            return gg_key(self.configuration_id, self.bindings)
        return harness_key(self.harness, self.model, self.provider)

    def label(self, configuration_name: str | None = None) -> str:
        if self.kind == CombinationKind.GG:
            models_text = ", ".join(f"{r}: {m}" for r, m in sorted(self.bindings.items()))
            name = configuration_name or f"gg configuration {self.configuration_id}"
            return f"{name} ({models_text})"
        return f"{self.model} via {self.harness} ({self.provider})"


class CoverageGroup(Named):
    KIND_COMBO = "combo"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="coverage_groups"
    )
    kind = models.CharField(max_length=16, default=KIND_COMBO, choices=[("combo", "combo")])
    members = models.ManyToManyField(Combination, through="GroupMember", related_name="groups")


class GroupMember(models.Model):
    group = models.ForeignKey(CoverageGroup, on_delete=models.CASCADE, related_name="memberships")
    combination = models.ForeignKey(Combination, on_delete=models.CASCADE)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["group", "position"]
        constraints = [
            models.UniqueConstraint(fields=["group", "position"], name="unique_group_position"),
        ]

    def __str__(self) -> str:
        return f"{self.group} #{self.position}: {self.combination_id}"
