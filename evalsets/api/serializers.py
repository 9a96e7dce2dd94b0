"""REST shapes of evalsets, journaled runs, proposals and outcome results (seed 003: snake_case).

Request serializers only check shapes; the rules (pins, summaries, policies) live in the pure
modules the services call, so the API, the admin and the ladders app share them.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evalsets import selectors
from evalsets.inputs import PIN, PINS, SUMMARY, canonical_pins, check_summary
from evalsets.models import AuthoredBy, Evalset, EvalsetRun, GateOutcome, OutcomeResult, Proposal
from evalsets.policy import POLICY, parse_policy
from loopweb.runs.api import fields as f
from loopweb.runs.api.schema import COMPONENTS, ref
from loopweb.runs.checks import Invalid

# Seed 003's formats, checked outside DRF by the pure modules, are stated by them: what no schema
# can state (a hash that names no evalset, two pins that are one once their defaults are filled
# in, moments the server's clock rules out) is left to the checks.
COMPONENTS.update({PIN.name: PIN.schema(), "SummaryInput": SUMMARY, POLICY.name: POLICY.schema()})


def checked(check, value):
    """Run a pure check; its dotted-path errors nest under the field being validated."""
    try:
        return check(value)
    except Invalid as exc:
        errors = exc.errors
        if set(errors) == {""}:
            raise serializers.ValidationError(errors[""]) from exc
        raise serializers.ValidationError(
            {path or "non_field_errors": messages for path, messages in errors.items()}
        ) from exc


class PinSerializer(serializers.Serializer):
    case = f.CharField()
    version = f.CharField()
    variant = f.CharField(default="default")
    engine = f.CharField(allow_null=True, default=None)


class EvalsetSerializer(f.ModelSerializer):
    pins = PinSerializer(many=True, read_only=True)
    run_count = serializers.SerializerMethodField()

    class Meta:
        model = Evalset
        fields = ["id", "hash", "name", "pins", "created_at", "run_count"]

    def get_run_count(self, evalset) -> int | None:
        return getattr(evalset, "run_count", None)


class EvalsetCreateSerializer(serializers.Serializer):
    name = f.CharField(max_length=200)
    # Checked by ``evalsets.inputs.canonical_pins`` so every error names ``pins.<i>.<key>``.
    pins = f.json_field(PINS)

    def validate_pins(self, value):
        return checked(canonical_pins, value)


class EvalsetRunSerializer(f.ModelSerializer):
    evalset = f.CharField(source="evalset.hash", read_only=True)
    recorded_at = f.DateTimeField(
        read_only=True,
        help_text="When the server recorded the run; the gate judges what came before a "
        "proposal by it, not by the client's journaled_at.",
    )

    class Meta:
        model = EvalsetRun
        fields = ["id", "evalset", "journaled_at", "recorded_at", "summary"]


class JournalSerializer(serializers.Serializer):
    summary = f.json_field(ref("SummaryInput"))
    journaled_at = f.DateTimeField(required=False, allow_null=True)

    def validate_summary(self, value):
        return checked(check_summary, value)


class CostReadSerializer(serializers.Serializer):
    read = f.CharField()
    field = f.CharField()
    max_increase_ratio = f.FloatField()
    baseline = f.FloatField(allow_null=True)
    current = f.FloatField(allow_null=True)


class OutcomeResultSerializer(f.ModelSerializer):
    cost = serializers.SerializerMethodField()
    pValue = serializers.FloatField(
        source="p_value",
        read_only=True,
        allow_null=True,
        help_text="p_value under the name API.md's Significance section gives it.",
    )

    class Meta:
        model = OutcomeResult
        fields = [
            "id",
            "checkpoint",
            "metric",
            "baseline",
            "current",
            "verdict",
            "baseline_kind",
            "baseline_run",
            "best_before",
            "tolerance",
            "current_run",
            "cost",
            "p_value",
            "pValue",
            "cases_needed",
            "measured_at",
        ]

    @extend_schema_field(CostReadSerializer(allow_null=True))
    def get_cost(self, result):
        if not result.cost_read:
            return None
        bound = result.proposal.outcome_evalset["cost"] or {}
        return {
            "read": result.cost_read,
            "field": bound.get("field"),
            "max_increase_ratio": bound.get("max_increase_ratio"),
            "baseline": result.cost_baseline,
            "current": result.cost_current,
        }


class RevertDraftSerializer(serializers.Serializer):
    id = f.IntegerField()
    result = f.IntegerField(source="result_id")
    severity = f.CharField()
    reason = f.CharField()
    created_at = f.DateTimeField()


class AdvisoryFlagSerializer(serializers.Serializer):
    id = f.IntegerField()
    result = f.IntegerField(source="result_id")
    reason = f.CharField()
    created_at = f.DateTimeField()


GATE_OUTCOME = f.ChoiceField(
    choices=GateOutcome.values,
    allow_null=True,
    help_text="How the gate closed the proposal: measured (every checkpoint has its result), "
    "no_baseline (its schedule is over and no run was recorded before it was created) or "
    "unmeasurable (its schedule is over and no run before the apply gives a baseline value); "
    "null while it is open or not measured at all.",
)


class ProposalSerializer(f.ModelSerializer):
    owner = f.CharField(source="owner.username", read_only=True)
    schedule = serializers.SerializerMethodField()
    gate = serializers.SerializerMethodField()
    skipped = serializers.SerializerMethodField()
    latest_verdict = f.CharField(read_only=True, allow_null=True)
    revert_draft = serializers.SerializerMethodField()
    advisory_flag = serializers.SerializerMethodField()
    gate_outcome = serializers.SerializerMethodField()
    closed_at = f.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = Proposal
        fields = [
            "id",
            "title",
            "authored_by",
            "applicable",
            "outcome_evalset",
            "owner",
            "created_at",
            "applied_at",
            "schedule",
            "gate",
            "skipped",
            "latest_verdict",
            "revert_draft",
            "advisory_flag",
            "gate_outcome",
            "closed_at",
        ]

    def get_schedule(self, proposal) -> list[dict[str, int]]:
        return [c.as_json() for c in proposal.policy.schedule()]

    def get_gate(self, proposal) -> str:
        return selectors.gate_status(proposal)

    def get_skipped(self, proposal) -> str | None:
        return selectors.skip_reason(proposal)

    @extend_schema_field(GATE_OUTCOME)
    def get_gate_outcome(self, proposal) -> str | None:
        return proposal.gate_outcome or None

    @extend_schema_field(RevertDraftSerializer(allow_null=True))
    def get_revert_draft(self, proposal):
        draft = getattr(proposal, "revert_draft", None)
        return RevertDraftSerializer(draft).data if draft else None

    @extend_schema_field(AdvisoryFlagSerializer(allow_null=True))
    def get_advisory_flag(self, proposal):
        flag = getattr(proposal, "advisory_flag", None)
        return AdvisoryFlagSerializer(flag).data if flag else None


class ProposalCreateSerializer(serializers.Serializer):
    title = f.CharField(max_length=300)
    authored_by = f.ChoiceField(choices=AuthoredBy.choices)
    applicable = f.BooleanField()
    # Checked by ``evalsets.policy.parse_policy``: errors name ``outcome_evalset.<path>``.
    outcome_evalset = f.json_field(ref(POLICY.name))

    def validate_outcome_evalset(self, value):
        checked(parse_policy, value)
        return value


class ApplySerializer(serializers.Serializer):
    applied_at = f.DateTimeField(required=False, allow_null=True)
