"""Seed 000's formats on the wire, snake_case as the seed writes them.

Requests are validated by ``signals_app.rules`` (one place for every field rule and E195) and
described for the OpenAPI schema by ``signals_app.api.openapi``; the serializers here describe what
the API answers.
"""

from rest_framework import serializers

from signals_app import rules
from signals_app.models import Signal


class SignalSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="signal_id", max_length=200)
    kind = serializers.ChoiceField(choices=rules.KINDS)
    name = serializers.CharField(max_length=200)
    value = serializers.JSONField(
        allow_null=True,
        help_text="verdict: accept|reject|pass|fail|error; score: a number or null; "
        "event: a reference string.",
    )
    unit = serializers.CharField(max_length=100, required=False, allow_null=True)
    better = serializers.ChoiceField(choices=rules.BETTER, required=False, allow_null=True)
    threshold = serializers.FloatField(required=False, allow_null=True)
    scale = serializers.ChoiceField(
        choices=rules.SCALES, required=False, allow_null=True, help_text="null means linear."
    )
    at_attempt = serializers.CharField(max_length=200, required=False, allow_null=True)
    observed_at = serializers.DateTimeField()
    tier = serializers.ChoiceField(choices=rules.TIERS)
    ext = serializers.JSONField(required=False, allow_null=True)
    run = serializers.IntegerField(source="run_id", read_only=True)
    source = serializers.CharField(read_only=True)
    recorded_by = serializers.CharField(
        source="recorded_by.username", read_only=True, allow_null=True, default=None
    )
    recorded_at = serializers.DateTimeField(read_only=True)
    threshold_result = serializers.ChoiceField(
        choices=["pass", "fail"],
        read_only=True,
        allow_null=True,
        help_text="A score read against its own threshold in its better direction (equal "
        "passes); null when not a score, without threshold or better, or not measured yet. "
        "Advisory: the acceptance rule's score part reads the rule's own target.",
    )

    class Meta:
        model = Signal
        fields = [
            *rules.SIGNAL_FIELDS,
            "threshold_result",
            "run",
            "source",
            "recorded_by",
            "recorded_at",
        ]


class ScoreTargetSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    target = serializers.FloatField()
    better = serializers.ChoiceField(choices=rules.BETTER)
    scale = serializers.ChoiceField(choices=rules.SCALES, required=False, allow_null=True)
    ext = serializers.JSONField(required=False, allow_null=True)


class AcceptanceRuleSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=500)
    requires = serializers.ListField(child=serializers.CharField(max_length=200), required=False)
    score = ScoreTargetSerializer(required=False, allow_null=True)
    excludes_events = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        help_text='["revert", "incident"] when absent.',
    )
    window_days = serializers.IntegerField(
        min_value=0, max_value=rules.MAX_WINDOW_DAYS, required=False, help_text="14 when absent."
    )
    ext = serializers.JSONField(required=False, allow_null=True)


class OutcomePartSerializer(serializers.Serializer):
    part = serializers.ChoiceField(choices=["requires", "score", "excludes_events"])
    name = serializers.CharField(allow_null=True)
    state = serializers.ChoiceField(choices=["pass", "fail", "unknown"])
    signal = serializers.CharField(allow_null=True, help_text="The id of the deciding signal.")
    reason = serializers.CharField()


class OutcomeSerializer(serializers.Serializer):
    result = serializers.ChoiceField(choices=["success", "failure", "unknown"])
    tier = serializers.ChoiceField(choices=rules.TIERS)
    rule = AcceptanceRuleSerializer()
    rule_source = serializers.ChoiceField(choices=["run", "owner"])
    parts = OutcomePartSerializer(many=True)


class MatchedSerializer(serializers.Serializer):
    matched = serializers.ListField(child=serializers.IntegerField())
