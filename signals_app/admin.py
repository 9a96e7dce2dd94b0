from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html

from loopweb.runs.admin import ReadOnlyAdmin
from signals_app import acceptance, rules, services
from signals_app.models import AcceptanceRule, Signal


@admin.register(Signal)
class SignalAdmin(ReadOnlyAdmin):
    """Signals are append-only (``POST /api/runs/{id}/signals``, and a review's referee
    verdict): the admin reads them, each linked to its run, and adds, changes and deletes none."""

    list_display = [
        "signal_id",
        "run_page",
        "kind",
        "name",
        "value",
        "threshold_reading",
        "tier",
        "observed_at",
        "source",
    ]
    list_filter = ["kind", "tier", "source"]
    search_fields = ["=run__id", "name", "signal_id"]
    list_select_related = ["run"]
    date_hierarchy = "observed_at"
    actions = None
    fields = ["run", "signal_id", "kind", "name", "value", "threshold_reading"]

    @admin.display(description="against its threshold")
    def threshold_reading(self, signal):
        return signal.threshold_reading

    @admin.display(description="run (outcome)", ordering="run")
    def run_page(self, signal):
        url = reverse("console:run-page", args=[signal.run_id])
        return format_html('<a href="{}">run {}</a>', url, signal.run_id)


class AcceptanceRuleForm(forms.ModelForm):
    """Checked by the same rules as the API (E195 included) before it is saved."""

    class Meta:
        model = AcceptanceRule
        fields = ["user", *rules.RULE_FIELDS]

    def clean(self):
        cleaned = super().clean()
        raw = {key: cleaned.get(key) for key in rules.RULE_FIELDS}
        try:
            self.rule = acceptance.parse_rule(raw)
        except ValidationError as exc:
            for path, errors in exc.error_dict.items():
                field = path.split(".")[0]
                self.add_error(field if field in self.fields else None, errors)
        return cleaned


@admin.register(AcceptanceRule)
class AcceptanceRuleAdmin(admin.ModelAdmin):
    form = AcceptanceRuleForm
    list_display = ["user", "name", "description", "requires", "score", "window_days", "updated_at"]
    list_filter = ["window_days", "updated_at"]
    search_fields = ["user__username", "name", "description"]
    raw_id_fields = ["user"]

    def get_readonly_fields(self, request, obj=None):
        return ["user"] if obj is not None else []

    def save_model(self, request, obj, form, change):
        saved = services.set_acceptance_rule(user=obj.user, body=form.rule)
        obj.pk = saved.pk
