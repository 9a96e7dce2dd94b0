"""What a provider budget may be, and how one reads: the checks the API and the console's form
both use, so both refuse the same things with the same messages (API.md, "Provider budgets")."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from loopweb.runs import budgeting
from loopweb.runs import json_fields as f
from loopweb.runs.models import ProviderBudget

#: A cap beyond any fleet; a larger number is a typo.
MAX_CAP = 1_000_000


class BackoffSerializer(serializers.Serializer):
    factor = serializers.FloatField(
        read_only=True, help_text="The share of its caps the back-off leaves (1.0: none)."
    )
    until = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="When the cap starts growing back (null: none)."
    )


class BudgetSerializer(serializers.Serializer):
    """A budget: staff's settings, with its live figures (``context["figures"]``: by id, from
    ``budgeting.figures``; read when absent)."""

    id = serializers.IntegerField(read_only=True)
    provider = f.CharField(max_length=100, trim_whitespace=True)
    model = f.CharField(
        max_length=200,
        allow_null=True,
        allow_blank=True,
        required=False,
        default=None,
        help_text="One model of the provider; null: every model of the provider.",
    )
    maxInFlight = f.IntegerField(
        source="max_in_flight",
        min_value=1,
        max_value=MAX_CAP,
        allow_null=True,
        required=False,
        default=None,
        help_text="Jobs of the budget drivers may hold at once; null: no cap.",
    )
    perMinute = f.IntegerField(
        source="per_minute",
        min_value=1,
        max_value=MAX_CAP,
        allow_null=True,
        required=False,
        default=None,
        help_text="Jobs of the budget that may start in any rolling minute; null: no cap.",
    )
    enabled = f.BooleanField(required=False, default=True)
    inFlight = serializers.SerializerMethodField()
    startedLastMinute = serializers.SerializerMethodField()
    inFlightCap = serializers.SerializerMethodField()
    perMinuteCap = serializers.SerializerMethodField()
    backoff = serializers.SerializerMethodField()

    def validate_provider(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Name a provider.", code="blank")
        return value

    def validate_model(self, value: str | None) -> str:
        return (value or "").strip()

    def validate(self, attrs):
        provider = attrs.get("provider", getattr(self.instance, "provider", ""))
        model = attrs.get("model", getattr(self.instance, "model", ""))
        clash = ProviderBudget.objects.filter(provider=provider, model=model)
        if self.instance is not None:
            clash = clash.exclude(pk=self.instance.pk)
        if clash.exists():
            what = f"model {model} of {provider}" if model else f"every model of {provider}"
            raise serializers.ValidationError(
                {"model": [f"A budget for {what} already exists."]}, code="unique"
            )
        return attrs

    def _figures(self, budget: ProviderBudget) -> budgeting.Figures:
        found = self.context.get("figures")
        if found is None or budget.pk not in found:
            found = budgeting.figures([budget])
            self.context["figures"] = {**self.context.get("figures", {}), **found}
        return found[budget.pk]

    def get_inFlight(self, budget) -> int:  # noqa: N802 - the contract's field name
        return self._figures(budget).in_flight

    def get_startedLastMinute(self, budget) -> int:  # noqa: N802
        return self._figures(budget).started_last_minute

    def get_inFlightCap(self, budget) -> int | None:  # noqa: N802
        """The in-flight cap now, after any back-off (null: none)."""
        return self._figures(budget).in_flight_cap

    def get_perMinuteCap(self, budget) -> int | None:  # noqa: N802
        """The per-minute cap now, after any back-off (null: none)."""
        return self._figures(budget).per_minute_cap

    @extend_schema_field(BackoffSerializer)
    def get_backoff(self, budget) -> dict:
        figures = self._figures(budget)
        return BackoffSerializer({"factor": figures.factor, "until": figures.until}).data

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["model"] = instance.model or None
        return data
