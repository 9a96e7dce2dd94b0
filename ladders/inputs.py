"""What a ladder's configuration may be: the checks the API's ladder endpoints and the console's
editor both read (the editor posts the same fields the API takes), so the browser and the API
refuse the same things with the same messages. Response shapes live in ``ladders.api``."""

from django.contrib.auth import get_user_model
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail

from ladders import gate, rubric
from ladders.models import default_gate
from ladders.rung_checks import MAX_RUNGS
from loopweb.runs import formats
from loopweb.runs import json_fields as f
from loopweb.runs.errors import unknown as unknown_text
from loopweb.runs.inputs import ReviewSerializer
from loopweb.runs.models import Combination, CoverageGroup, Rating
from loopweb.runs.models.catalog import PIN_PART


class ThresholdSerializer(serializers.Serializer):
    count = f.IntegerField(min_value=0, max_value=10_000, required=False)
    fraction = f.FloatField(min_value=0.0, max_value=1.0, required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = set(data) - {"count", "fraction"}
            if unknown:
                raise serializers.ValidationError(unknown_text("key", sorted(unknown)))
        return super().to_internal_value(data)

    def validate(self, attrs):
        if len(attrs) != 1:
            raise serializers.ValidationError(
                'Give exactly one of {"count": n} or {"fraction": f}.'
            )
        return attrs


# A threshold is {"count": n} or {"fraction": f}: exactly one key, no other.
formats.patch(
    "ThresholdRequest", _={"additionalProperties": False, "minProperties": 1, "maxProperties": 1}
)


class GateSerializer(serializers.Serializer):
    floor = f.ChoiceField(choices=Rating.values, default=gate.DEFAULT_FLOOR)
    threshold = ThresholdSerializer(default=gate.DEFAULT_THRESHOLD)
    unloadedCountsAsBroken = f.BooleanField(default=gate.DEFAULT_UNLOADED_COUNTS_AS_BROKEN)
    earlyStop = f.BooleanField(default=gate.DEFAULT_EARLY_STOP)


class RungSerializer(serializers.Serializer):
    id = f.CharField(max_length=40, required=False, allow_null=True)
    case = f.SlugField(max_length=100)
    version = f.CharField(max_length=64, validators=[PIN_PART])
    variant = f.CharField(max_length=64, validators=[PIN_PART], default="default")
    engine = f.CharField(
        max_length=64, validators=[PIN_PART], allow_null=True, required=False, default=None
    )
    runs = f.IntegerField(min_value=1, max_value=100, allow_null=True, default=None)
    stale = f.BooleanField(read_only=True)


class CriterionSerializer(serializers.Serializer):
    """One criterion of a ladder's rubric (``ladders.rubric``)."""

    id = f.RegexField(
        rubric.CRITERION_ID, max_length=40, error_messages={"invalid": rubric.CRITERION_ID_RULE}
    )
    kind = f.ChoiceField(choices=rubric.KINDS)
    label = f.CharField(max_length=80, allow_blank=True, default="")
    description = f.CharField(max_length=500, allow_blank=True, default="")
    required = f.BooleanField(default=False)
    min = f.FloatField(required=False, allow_null=True, default=None, min_value=-1e6, max_value=1e6)
    max = f.FloatField(required=False, allow_null=True, default=None, min_value=-1e6, max_value=1e6)
    step = f.FloatField(required=False, allow_null=True, default=None, min_value=0, max_value=1e6)
    labels = f.ListField(
        child=f.CharField(max_length=60), default=list, max_length=rubric.MAX_LABELS
    )

    def validate(self, attrs):
        problems = rubric.criterion_problems(attrs)
        if problems:
            # Relations between a criterion's fields (max above min, a step dividing the range),
            # which JSON Schema cannot state, are coded "criterion"; the rest the schema says.
            raise serializers.ValidationError(
                {
                    name: [
                        ErrorDetail(text, "criterion" if text in rubric.RELATIONS else "invalid")
                    ]
                    for name, text in problems.items()
                }
            )
        return _stored_criterion(attrs)


# A criterion's kind decides its fields: a number has a min, a max and a step above 0; a
# category two distinct labels or more.
formats.patch(
    "CriterionRequest",
    _={
        "allOf": [
            {
                "if": {"properties": {"kind": {"const": "number"}}, "required": ["kind"]},
                "then": {
                    "required": ["min", "max", "step"],
                    "properties": {
                        "min": {"type": "number"},
                        "max": {"type": "number"},
                        "step": {"type": "number", "exclusiveMinimum": 0},
                    },
                },
            },
            {
                "if": {"properties": {"kind": {"const": "category"}}, "required": ["kind"]},
                "then": {
                    "required": ["labels"],
                    "properties": {"labels": {"minItems": 2, "uniqueItems": True}},
                },
            },
        ]
    },
)


def _stored_criterion(attrs: dict) -> dict:
    """The criterion as stored and answered: only its kind's fields, whole numbers as integers."""
    stored = {
        "id": attrs["id"],
        "kind": attrs["kind"],
        "label": attrs["label"] or attrs["id"],
        "description": attrs["description"],
        "required": attrs["required"],
    }
    if attrs["kind"] == "number":
        for key in ("min", "max", "step"):
            value = attrs[key]
            stored[key] = int(value) if float(value).is_integer() else value
    elif attrs["kind"] == "category":
        stored["labels"] = list(attrs["labels"])
    return stored


class ReviewSettingsMixin(serializers.Serializer):
    """A ladder's review settings. Left out of a PUT, each keeps its value (a client or the
    console's editor that knows nothing of them leaves them as they are); a new ladder takes
    the defaults: no rubric, 1 review per run, every reviewer assigned, 15 minutes."""

    rubric = CriterionSerializer(many=True, required=False)
    reviewsPerRun = f.IntegerField(min_value=1, max_value=20, required=False)
    assignedReviewers = serializers.ListField(
        child=f.CharField(max_length=150), required=False, max_length=100
    )
    reservationMinutes = f.IntegerField(min_value=1, max_value=1440, required=False)

    def validate_rubric(self, value):
        if len(value) > rubric.MAX_CRITERIA:
            raise serializers.ValidationError(
                f"A rubric holds at most {rubric.MAX_CRITERIA} criteria."
            )
        ids = [c["id"] for c in value]
        repeated = next((i for i in ids if ids.count(i) > 1), None)
        if repeated is not None:
            raise serializers.ValidationError(
                f"The criterion id {repeated} appears twice.", code="unique"
            )
        return value

    def validate_assignedReviewers(self, value):
        return user_ids(value)

    def validate(self, attrs):
        attrs = super().validate(attrs)
        assigned, shared = attrs.get("assignedReviewers"), attrs.get("reviewers")
        if assigned and shared is not None:
            outside = [pk for pk in assigned if pk not in shared]
            if outside:
                names = dict(
                    get_user_model().objects.filter(pk__in=outside).values_list("pk", "username")
                )
                raise serializers.ValidationError(
                    {
                        "assignedReviewers": [
                            "Assign only reviewers the ladder is shared with (reviewers); not: "
                            + ", ".join(names[pk] for pk in outside)
                            + "."
                        ]
                    },
                    code="not_shared",
                )
        return attrs


def user_ids(value: list[str]) -> list[int]:
    """The users' ids, each named once, all of them users."""
    users = dict(get_user_model().objects.filter(username__in=value).values_list("username", "pk"))
    unknown = [name for name in value if name not in users]
    if unknown:
        raise serializers.ValidationError(unknown_text("user", unknown), code="does_not_exist")
    return [users[name] for name in dict.fromkeys(value)]


def known_ids(queryset, value: list[int], what: str) -> list[int]:
    """The ids (distinct: the field says so), all of them rows of the queryset."""
    known = set(queryset.filter(pk__in=value).values_list("pk", flat=True))
    unknown = [pk for pk in value if pk not in known]
    if unknown:
        raise serializers.ValidationError(
            unknown_text(f"{what} id", unknown), code="does_not_exist"
        )
    return value


class RetryCountField(f.IntegerField):
    """0-10; a value above the range is clamped to 10, below it is an error."""

    def to_internal_value(self, data):
        return min(super().to_internal_value(data), 10)


def id_list(*, max_length: int, what: str) -> f.ListField:
    """Distinct ids, at most ``max_length`` of them."""
    return f.ListField(
        child=f.IdField(),
        default=list,
        max_length=max_length,
        unique=True,
        unique_message=f"{what} appears twice.",
    )


class LadderConfigSerializer(ReviewSettingsMixin, serializers.Serializer):
    id = f.IntegerField(read_only=True)
    name = f.CharField(max_length=200)
    rungs = RungSerializer(many=True, default=list)
    groups = id_list(max_length=100, what="A group")
    combinations = id_list(max_length=1000, what="A combination")
    gate = GateSerializer(default=default_gate)
    runsPerCell = f.IntegerField(min_value=1, max_value=100, default=1)
    runsInFlightLimit = f.IntegerField(
        min_value=0, max_value=100_000, allow_null=True, default=None
    )
    retryCount = RetryCountField(min_value=0, default=1)
    outerAxis = f.ChoiceField(choices=["rung", "combination"], default="rung")
    reviewers = serializers.ListField(
        child=f.CharField(max_length=150), default=list, max_length=100
    )

    def validate_rungs(self, value):
        if len(value) > MAX_RUNGS:
            raise serializers.ValidationError(f"A ladder holds at most {MAX_RUNGS} rungs.")
        ids = [r.get("id") for r in value if r.get("id")]
        if len(ids) != len(set(ids)):
            raise serializers.ValidationError("A rung id appears twice.", code="unique")
        return value

    def validate_groups(self, value):
        # The ladder's owner: staff editing another owner's ladder keep that owner's groups.
        owner = self.context.get("owner") or self.context["request"].user
        return known_ids(CoverageGroup.objects.filter(owner=owner), value, "combination group")

    def validate_combinations(self, value):
        return known_ids(Combination.objects.all(), value, "combination")

    def validate_reviewers(self, value):
        return user_ids(value)

    def validate_gate(self, value):
        value = dict(value)
        value["threshold"] = dict(value["threshold"])
        return value


class QueueReviewSerializer(ReviewSerializer):
    """A review taken from a ladder's queue: the review contract (aestheticRating, writeup,
    verdict) and ``values``, the answers to the ladder's rubric ({criterion id: value}),
    checked against it by ``ladders.queue``."""

    values = f.object_field(
        {
            "type": "object",
            "additionalProperties": {"type": ["number", "string", "boolean", "null"]},
            "description": "{criterion id: a number (number criteria), one of the labels "
            "(category criteria), true or false (boolean criteria)}; a criterion left out or "
            "null is unanswered.",
        },
        required=False,
        default=dict,
    )
