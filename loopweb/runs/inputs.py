"""What a review, a combination and a coverage group may be: the checks the API and the console's
forms both read, so the browser and the API refuse the same things with the same messages."""

from django.db import IntegrityError, transaction
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail

from loopweb.runs import formats
from loopweb.runs import json_fields as f
from loopweb.runs.cells import MAX_COMBINATION_CELL_KEY, MAX_COMBINATION_KEY, CombinationCell
from loopweb.runs.errors import unknown as unknown_text
from loopweb.runs.formats import NOT_BLANK, SPACE
from loopweb.runs.models import (
    Combination,
    CombinationKind,
    CoverageGroup,
    GGConfiguration,
    GroupMember,
    ModelEntry,
    Review,
    ReviewVerdict,
)


def missing(message: str) -> ErrorDetail:
    """An error naming something that does not exist (a reference the schema cannot check)."""
    return ErrorDetail(message, code="does_not_exist")


def taken(message: str) -> ErrorDetail:
    """An error naming a uniqueness conflict with what is stored."""
    return ErrorDetail(message, code="unique")


class ReviewSerializer(f.ModelSerializer):
    aestheticRating = f.IntegerField(source="aesthetic_rating", min_value=1, max_value=5)
    verdict = f.ChoiceField(
        choices=ReviewVerdict.values, required=False, allow_null=True, allow_blank=True
    )
    reviewer = f.CharField(source="reviewer.username", read_only=True)
    createdAt = f.DateTimeField(source="created_at", read_only=True)
    writeup = f.CharField(max_length=20000, allow_blank=True, default="")
    #: Answers to the rubric of the ladder whose queue took the review ({} without one).
    values = serializers.DictField(read_only=True)

    class Meta:
        model = Review
        fields = [
            "id", "run", "reviewer", "aestheticRating", "writeup", "verdict", "values", "createdAt",
        ]  # fmt: skip
        read_only_fields = ["id", "run"]

    def validate(self, attrs):
        initial = getattr(self, "initial_data", None)
        if self.fields["values"].read_only and isinstance(initial, dict) and "values" in initial:
            raise serializers.ValidationError(
                {"values": ["Rubric values answer a ladder's rubric: post the review through "
                            "the ladder's queue, POST /api/ladders/{id}/queue/{run}/reviews."]}
            )  # fmt: skip
        return attrs


class ModelEntrySerializer(f.ModelSerializer):
    """A model catalog entry, as the API and the console's Combinations page take it."""

    class Meta:
        model = ModelEntry
        fields = ["id", "name", "provider", "launchable"]


class CombinationSerializer(f.ModelSerializer):
    configuration = f.IdField(source="configuration_id", required=False, allow_null=True)
    bindings = serializers.DictField(child=f.CharField(max_length=200), required=False)
    label = serializers.SerializerMethodField()

    class Meta:
        model = Combination
        fields = [
            "id",
            "kind",
            "key",
            "label",
            "harness",
            "model",
            "provider",
            "configuration",
            "bindings",
        ]
        read_only_fields = ["id", "key", "label"]
        extra_kwargs = {
            "harness": {"required": False, "validators": []},
            "model": {"required": False},
            "provider": {"required": False},
        }

    def get_label(self, combination) -> str:
        names = self.context.get("configuration_names") or {}
        return combination.label(names.get(combination.configuration_id))

    def validate(self, attrs):
        kind = attrs["kind"]
        if kind == CombinationKind.HARNESS:
            errors = {
                name: ["This field is required for a harness combination."]
                for name in ("harness", "model", "provider")
                if not attrs.get(name)
            }
            if errors:
                raise serializers.ValidationError(errors)
            for name in ("harness", "provider"):
                if "|" in attrs[name]:
                    raise serializers.ValidationError({name: ["'|' is not allowed here."]})
            if attrs["harness"].startswith("gg:"):
                # Keys starting "gg:" are gg combinations' keys.
                raise serializers.ValidationError({"harness": ["'gg:' may not start a harness."]})
            attrs["configuration_id"] = None
            attrs["bindings"] = {}
        else:
            bindings = attrs.get("bindings") or {}
            configuration = self._configuration_for(
                GGConfiguration.objects.filter(pk=attrs.get("configuration_id")), bindings
            )
            attrs.update(harness="", model="", provider="", bindings=bindings)
            self._check_cell_fits(configuration, bindings)
        candidate = Combination(**attrs)
        key = candidate.compute_key()
        if len(key) > MAX_COMBINATION_KEY:
            field = "bindings" if kind == CombinationKind.GG else "model"
            raise serializers.ValidationError(
                {field: [f"The combination's key would exceed {MAX_COMBINATION_KEY} characters."]}
            )
        existing = Combination.objects.filter(key=key).first()
        if existing is not None:
            raise serializers.ValidationError(
                {"key": [taken(self._exists_message(key, existing.pk))]}
            )
        return attrs

    @staticmethod
    def _configuration_for(configurations, bindings: dict[str, str]) -> GGConfiguration:
        """The gg configuration named, if the bindings bind each of its roles."""
        configuration = configurations.first()
        if configuration is None:
            raise serializers.ValidationError(
                {"configuration": [missing("Name an existing gg configuration.")]}
            )
        if not configuration.roles:
            raise serializers.ValidationError(
                {"configuration": ["This gg configuration declares no roles."]}
            )
        if set(bindings) != set(configuration.roles):
            message = f"Bind exactly one model to each role: {configuration.roles}."
            raise serializers.ValidationError({"bindings": [missing(message)]})
        return configuration

    @staticmethod
    def _exists_message(key: str, pk: int) -> str:
        return f"A combination with key {key!r} already exists (id {pk})."

    @staticmethod
    def _check_cell_fits(configuration: GGConfiguration, bindings: dict[str, str]) -> None:
        # The launch model's provider comes from the catalog when the climber resolves; a model
        # not in the catalog yet is assumed to get the longest provider the catalog allows.
        launch_model = bindings[configuration.roles[0]]
        provider = ModelEntry.objects.filter(name=launch_model).values_list("provider", flat=True)
        cell = CombinationCell(
            harness="gg",
            model=launch_model,
            provider=provider.first() or "x" * ModelEntry._meta.get_field("provider").max_length,
            configuration_id=configuration.pk,
            bound_models=tuple(sorted(bindings.values())),
        )
        if len(cell.key) > MAX_COMBINATION_CELL_KEY:
            raise serializers.ValidationError(
                {"bindings": ["The bound model names are too long together for a cell key."]}
            )

    def create(self, validated_data):
        try:
            # A savepoint: a concurrent create of the same key loses cleanly, as a 400.
            with transaction.atomic():
                if validated_data["kind"] == CombinationKind.GG:
                    # The configuration's row stays locked until the combination is stored:
                    # a delete of the configuration at the same moment
                    # (``loopweb.runs.catalog.delete_gg_configuration`` takes the same lock)
                    # either sees this combination and refuses, or has deleted the row, and
                    # this create is refused here.
                    self._configuration_for(
                        GGConfiguration.objects.select_for_update().filter(
                            pk=validated_data["configuration_id"]
                        ),
                        validated_data["bindings"],
                    )
                return super().create(validated_data)
        except IntegrityError:
            key = Combination(**validated_data).compute_key()
            existing = Combination.objects.filter(key=key).values_list("pk", flat=True).first()
            raise serializers.ValidationError(
                {"key": [taken(self._exists_message(key, existing))]}
            ) from None


#: A harness or provider: not blank, no "|" (it separates a key's parts).
KEY_PART = f"^[^|\\u0000]*[^{SPACE}|\\u0000][^|\\u0000]*$"

# A harness combination names its harness, model and provider; a gg combination its
# configuration and one model per role of it.
formats.patch(
    "CombinationRequest",
    _={
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": "harness"}}},
                "then": {
                    "required": ["harness", "model", "provider"],
                    "properties": {
                        "harness": {"pattern": KEY_PART, "not": {"pattern": f"^[{SPACE}]*gg:"}},
                        "model": {"pattern": NOT_BLANK},
                        "provider": {"pattern": KEY_PART},
                    },
                },
            },
            {
                "if": {"properties": {"kind": {"const": "gg"}}},
                "then": {
                    "required": ["configuration", "bindings"],
                    "properties": {
                        "configuration": {"type": "integer"},
                        "bindings": {"minProperties": 1},
                    },
                },
            },
        ]
    },
)


class MemberIdsField(f.ListField):
    """A group's combination ids in member order (``memberships`` is ordered by position)."""

    def get_attribute(self, group):
        return [membership.combination_id for membership in group.memberships.all()]


class GroupSerializer(f.ModelSerializer):
    kind = f.ChoiceField(choices=["combo"], default="combo")
    members = MemberIdsField(
        child=f.IdField(),
        max_length=1000,
        default=list,
        unique=True,
        unique_message="A combination appears twice.",
    )

    class Meta:
        model = CoverageGroup
        fields = ["id", "name", "kind", "members"]

    def validate_members(self, value):
        known = set(Combination.objects.filter(pk__in=value).values_list("pk", flat=True))
        missing = [pk for pk in value if pk not in known]
        if missing:
            raise serializers.ValidationError(
                unknown_text("combination id", missing), code="does_not_exist"
            )
        return value

    @transaction.atomic
    def create(self, validated_data):
        members = validated_data.pop("members")
        group = CoverageGroup.objects.create(owner=self.context["request"].user, **validated_data)
        self._set_members(group, members)
        return group

    @transaction.atomic
    def update(self, group, validated_data):
        members = validated_data.pop("members", None)
        group.name = validated_data.get("name", group.name)
        group.save()
        if members is not None:
            group.memberships.all().delete()
            self._set_members(group, members)
        return group

    def _set_members(self, group, members):
        GroupMember.objects.bulk_create(
            GroupMember(group=group, combination_id=pk, position=i) for i, pk in enumerate(members)
        )
