from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from loopweb.runs.api import fields as f
from loopweb.runs.api import schema
from loopweb.runs.api.overrides import OverrideSerializer
from loopweb.runs.api.schema import NO_NUL, STORABLE, STORABLE_OBJECT
from loopweb.runs.cells import (
    CasePin,
)
from loopweb.runs.inputs import CombinationSerializer, taken
from loopweb.runs.inputs import ModelEntrySerializer as ModelEntrySerializer
from loopweb.runs.models import (
    Case,
    CaseVersion,
    Combination,
    GGConfiguration,
    Job,
    Outcome,
)
from loopweb.runs.models.catalog import PIN_PART
from loopweb.runs.numbers import METRIC_COUNTS, METRIC_MAX, RUNTIME_MAX, metric_problems
from loopweb.runs.overrides import standing

RECORD = {
    **STORABLE_OBJECT,
    "description": "The run record: free JSON. Known keys: checklist, toolchain, metrics "
    "(metrics.runtime_s a number of seconds, or null), artifacts.",
    "properties": {
        "metrics": {
            "anyOf": [
                {"not": {"type": "object"}},
                {
                    **STORABLE_OBJECT,
                    "properties": {
                        "runtime_s": {
                            "type": ["number", "null"],
                            "minimum": 0,
                            "maximum": RUNTIME_MAX,
                        },
                        **{
                            key: {"type": ["integer", "null"], "minimum": 0, "maximum": METRIC_MAX}
                            for key in METRIC_COUNTS
                        },
                    },
                },
            ]
        }
    },
}

CHECKLIST = {
    "type": "array",
    "maxItems": 500,
    "description": "Items {id, text, critical}; ids are distinct within a version.",
    "items": {
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": NO_NUL},
            "text": {"type": "string", "maxLength": 1000, "pattern": NO_NUL},
            "critical": {"type": "boolean"},
        },
        "propertyNames": {"pattern": NO_NUL},
        "additionalProperties": STORABLE,
    },
}


class CaseVersionSerializer(f.ModelSerializer):
    ingestedAt = f.DateTimeField(source="ingested_at", required=False)
    variants = serializers.ListField(
        child=f.CharField(max_length=64, validators=[PIN_PART]),
        required=False,
        max_length=100,
    )
    engines = serializers.ListField(
        child=f.CharField(max_length=64, validators=[PIN_PART]),
        required=False,
        max_length=100,
    )
    checklist = f.json_field(CHECKLIST, required=False)

    class Meta:
        model = CaseVersion
        fields = ["version", "ingestedAt", "legacy", "variants", "engines", "checklist"]

    def validate_variants(self, value):
        value = list(dict.fromkeys(value))
        return value or ["default"]

    def validate_checklist(self, value):
        if not isinstance(value, list) or len(value) > 500:
            raise serializers.ValidationError("A list of at most 500 checklist items.")
        items, seen = [], set()
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise serializers.ValidationError({index: ["A checklist item is an object."]})
            item_id = item.get("id")
            if not isinstance(item_id, str) or not item_id or len(item_id) > 100:
                raise serializers.ValidationError(
                    {index: {"id": ["A checklist item needs a string id of 1-100 characters."]}}
                )
            if item_id in seen:
                raise serializers.ValidationError(
                    {index: {"id": [taken(f"Duplicate id {item_id!r}.")]}}
                )
            seen.add(item_id)
            text = item.get("text", "")
            if not isinstance(text, str) or len(text) > 1000:
                raise serializers.ValidationError(
                    {index: {"text": ["Text must be a string of at most 1000 characters."]}}
                )
            critical = item.get("critical", False)
            if not isinstance(critical, bool):
                raise serializers.ValidationError({index: {"critical": ["Must be true or false."]}})
            items.append({"id": item_id, "text": text, "critical": critical})
        return items

    def validate(self, attrs):
        attrs.setdefault("variants", ["default"])
        return attrs


class CaseSerializer(f.ModelSerializer):
    versions = serializers.SerializerMethodField()

    class Meta:
        model = Case
        fields = ["slug", "title", "kind", "versions"]

    def get_versions(self, case) -> list[dict]:
        if not self.context.get("with_versions"):
            return []
        return CaseVersionSerializer(case.versions.all(), many=True).data


class GGConfigurationSerializer(f.ModelSerializer):
    roles = f.ListField(
        child=f.RegexField(r"^[A-Za-z0-9_-]{1,50}$"),
        min_length=1,
        max_length=20,
        unique=True,
        unique_message="Roles must be distinct.",
    )

    class Meta:
        model = GGConfiguration
        fields = ["id", "name", "roles"]


class PinSerializer(serializers.Serializer):
    case = f.SlugField(max_length=100)
    version = f.CharField(max_length=64, validators=[PIN_PART])
    variant = f.CharField(max_length=64, validators=[PIN_PART], default="default")
    engine = f.CharField(
        max_length=64, validators=[PIN_PART], allow_null=True, required=False, default=None
    )

    def pin(self) -> CasePin:
        d = self.validated_data
        return CasePin(d["case"], d["version"], d["variant"], d.get("engine"))


class HandLaunchSerializer(PinSerializer):
    combination = f.PrimaryKeyRelatedField(queryset=Combination.objects.all())
    retryCount = f.IntegerField(min_value=0, required=False, default=1)


class JobSerializer(f.ModelSerializer):
    retryCount = f.IntegerField(source="retry_count")
    cellKey = f.CharField(source="cell_key")
    leaseExpiresAt = f.DateTimeField(source="lease_expires_at", allow_null=True)
    createdAt = f.DateTimeField(source="created_at")
    finishedAt = f.DateTimeField(source="finished_at", allow_null=True)
    retries = serializers.SerializerMethodField()
    retriedBy = f.IntegerField(source="retry_id", allow_null=True)
    run = serializers.SerializerMethodField()
    combination = CombinationSerializer(allow_null=True, read_only=True)
    cell = serializers.JSONField(source="combination_cell", read_only=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "status",
            "origin",
            "attempt",
            "retryCount",
            "retries",
            "retriedBy",
            "leaseExpiresAt",
            "cellKey",
            "case",
            "version",
            "variant",
            "engine",
            "combination",
            "cell",
            "failure",
            "run",
            "createdAt",
            "finishedAt",
        ]

    def get_run(self, job) -> int | None:
        # Reverse one-to-ones: select_related("run", "retry_of") makes these free.
        run = getattr(job, "run", None)
        return run.pk if run is not None else None

    def get_retries(self, job) -> int | None:
        """The attempt this job retries."""
        retried = getattr(job, "retry_of", None)
        return retried.pk if retried is not None else None


def job_context(jobs) -> dict:
    """Serializer context naming the gg configurations of the jobs' combinations (one query)."""
    ids = {
        job.combination.configuration_id
        for job in jobs
        if job.combination is not None and job.combination.configuration_id is not None
    }
    names = (
        dict(GGConfiguration.objects.filter(pk__in=ids).values_list("id", "name")) if ids else {}
    )
    return {"configuration_names": names}


class ClaimSerializer(serializers.Serializer):
    max = f.IntegerField(min_value=1, max_value=100, default=1)


class StatusSerializer(serializers.Serializer):
    # "pending" is accepted too: a driver waiting for capacity heartbeats by repeating it.
    status = f.ChoiceField(choices=["pending", "dispatched", "starting", "running"])


class FailSerializer(serializers.Serializer):
    failure = f.ChoiceField(choices=[o for o in Outcome.values if o != "completed"])
    detail = f.CharField(max_length=5000, required=False, allow_blank=True, default="")


class RunPushSerializer(serializers.Serializer):
    job = f.IdField(required=False, allow_null=True)
    case = f.SlugField(max_length=100, required=False)
    version = f.CharField(max_length=64, validators=[PIN_PART], required=False)
    variant = f.CharField(max_length=64, validators=[PIN_PART], default="default")
    engine = f.CharField(
        max_length=64, validators=[PIN_PART], allow_null=True, required=False, default=None
    )
    combination = f.PrimaryKeyRelatedField(queryset=Combination.objects.all(), required=False)
    outcome = f.ChoiceField(choices=Outcome.choices)
    record = f.object_field(RECORD, default=dict)
    finishedAt = f.DateTimeField()
    commit = f.CharField(max_length=200, required=False, allow_blank=True, default="")
    mergeArtifact = f.CharField(max_length=200, required=False, allow_blank=True, default="")
    # Read by the apps that subscribe to pushes (signals_app states their formats).
    signals = f.json_field(STORABLE, required=False)
    acceptance_rule = f.json_field(STORABLE, required=False, allow_null=True)

    def validate_record(self, value):
        problems = metric_problems(value)
        if problems:
            raise serializers.ValidationError(problems)
        return value

    def validate(self, attrs):
        if attrs.get("job") is None and not self.context.get("repush"):
            missing = {
                name: ["Give the job, or the cell of a run launched outside Loopweb."]
                for name in ("case", "version", "combination")
                if name not in attrs
            }
            if missing:
                raise serializers.ValidationError(missing)
        return attrs

    def payload(self) -> dict:
        data = self.validated_data
        return {k: data[k] for k in ("signals", "acceptance_rule") if k in data}


class RunRepushSerializer(RunPushSerializer):
    """A re-push (``PUT /api/runs/{id}/``): the run names its job or cell already."""

    def __init__(self, *args, **kwargs):
        kwargs["context"] = {**kwargs.get("context", {}), "repush": True}
        super().__init__(*args, **kwargs)


# A push names its job, or the cell of a run launched outside Loopweb.
schema.patch(
    "RunPushRequest",
    _={
        "anyOf": [
            {"required": ["job"], "properties": {"job": {"type": "integer"}}},
            {"required": ["case", "version", "combination"]},
        ]
    },
)


class RunSerializer(serializers.Serializer):
    """A run as the API shows it. Declared field by field: a run is shown on every push, and a
    ModelSerializer would rebuild these fields from the model each time."""

    id = f.IntegerField(read_only=True)
    job = f.IntegerField(source="job_id", allow_null=True)
    cellKey = f.CharField(source="cell_key")
    case = f.CharField()
    version = f.CharField()
    variant = f.CharField()
    engine = f.CharField(allow_null=True)
    combination = f.IntegerField(source="combination_id", allow_null=True)
    cell = serializers.JSONField(source="combination_cell")
    outcome = f.ChoiceField(choices=Outcome.choices)
    record = serializers.JSONField()
    buildLoaded = f.BooleanField(source="build_loaded", allow_null=True)
    validatorRating = f.CharField(source="validator_rating", allow_null=True)
    storedRating = f.CharField(
        source="stored_rating",
        allow_null=True,
        help_text="The validator rating with the reviewers' checklist overrides folded in (the "
        "latest override of each item stands); the gate reads the validator rating alone.",
    )
    overrides = serializers.SerializerMethodField()
    counted = f.BooleanField()
    published = f.BooleanField()
    finishedAt = f.DateTimeField(source="finished_at")
    commit = f.CharField()
    mergeArtifact = f.CharField(source="merge_artifact")
    acceptance_rule = serializers.JSONField(allow_null=True)
    reviewed = serializers.SerializerMethodField()

    @extend_schema_field(OverrideSerializer(many=True))
    def get_overrides(self, run):
        """The override that stands for each overridden item: who said what of it
        (``GET /api/runs/{id}/overrides`` lists them all)."""
        rows = getattr(run, "override_rows", None)
        if rows is None:
            rows = run.overrides.select_related("reviewer")
        return OverrideSerializer(standing(rows), many=True).data

    def get_reviewed(self, run) -> bool:
        count = getattr(run, "review_count", None)
        if count is None:
            return run.reviews.exists()
        return count > 0


class TokenRequestSerializer(serializers.Serializer):
    username = f.CharField(max_length=150)
    password = f.CharField(max_length=200, trim_whitespace=False)
