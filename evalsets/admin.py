"""The admin inspects the verify gate. It creates, changes and deletes nothing the gate reads:
evalsets, runs and proposals are written through the services (REST), so every rule applies;
results, revert drafts and advisory flags come only from the gate. An evalset's name and a
proposal's title stay editable (they are labels); deleting either would take the gate's
journaled runs or results with it, so neither is deleted here.
"""

from django.contrib import admin

from evalsets.models import (
    AdvisoryFlag,
    Evalset,
    EvalsetRun,
    OutcomeResult,
    Proposal,
    RevertDraft,
)
from loopweb.runs.admin import ReadOnlyAdmin, ReadOnlyInline


class LabelOnlyAdmin(admin.ModelAdmin):
    """Every field of ``fields`` read-only but its label, ``label``; no add, no delete."""

    label = "name"

    def get_readonly_fields(self, request, obj=None):
        return [name for name in self.fields if name != self.label]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Evalset)
class EvalsetAdmin(LabelOnlyAdmin):
    list_display = ["name", "hash", "pin_count", "created_by", "created_at"]
    search_fields = ["name", "hash"]
    date_hierarchy = "created_at"
    fields = ["name", "hash", "pins", "created_by", "created_at"]

    @admin.display(description="pins")
    def pin_count(self, evalset) -> int:
        return len(evalset.pins or [])


@admin.register(EvalsetRun)
class EvalsetRunAdmin(ReadOnlyAdmin):
    list_display = ["id", "evalset", "journaled_at", "passed", "failed", "journaled_by"]
    list_filter = ["evalset"]
    list_select_related = ["evalset", "journaled_by"]
    search_fields = ["evalset__name", "evalset__hash"]
    date_hierarchy = "journaled_at"
    fields = ["evalset", "journaled_at", "recorded_at", "summary", "journaled_by"]

    @admin.display(description="passed")
    def passed(self, run):
        return run.summary.get("passed")

    @admin.display(description="failed")
    def failed(self, run):
        return run.summary.get("failed")


class OutcomeResultInline(ReadOnlyInline):
    model = OutcomeResult
    fields = [
        "checkpoint",
        "verdict",
        "baseline",
        "current",
        "tolerance",
        "cost_read",
        "measured_at",
    ]


@admin.register(Proposal)
class ProposalAdmin(LabelOnlyAdmin):
    label = "title"
    list_display = [
        "id",
        "title",
        "owner",
        "authored_by",
        "applicable",
        "evalset",
        "created_at",
        "applied_at",
        "verify_complete",
    ]
    list_filter = [
        "authored_by",
        "applicable",
        "verify_complete",
        ("applied_at", admin.EmptyFieldListFilter),
    ]
    list_select_related = ["owner", "evalset"]
    search_fields = ["title", "owner__username", "evalset__hash", "evalset__name"]
    date_hierarchy = "created_at"
    fields = [
        "title",
        "owner",
        "authored_by",
        "applicable",
        "outcome_evalset",
        "evalset",
        "waits_on_grains",
        "created_at",
        "applied_at",
        "verify_complete",
        "gate_outcome",
        "closed_at",
    ]
    inlines = [OutcomeResultInline]


@admin.register(OutcomeResult)
class OutcomeResultAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "proposal",
        "checkpoint",
        "metric",
        "verdict",
        "baseline",
        "current",
        "tolerance",
        "cost_read",
        "measured_at",
    ]
    list_filter = ["verdict", "baseline_kind", "cost_read"]
    list_select_related = ["proposal"]
    search_fields = ["metric", "proposal__title"]
    date_hierarchy = "measured_at"


@admin.register(RevertDraft)
class RevertDraftAdmin(ReadOnlyAdmin):
    list_display = ["id", "proposal", "severity", "result", "created_at"]
    list_filter = ["severity"]
    list_select_related = ["proposal", "result"]
    search_fields = ["proposal__title", "reason"]
    fields = ["proposal", "result", "severity", "reason", "created_at"]


@admin.register(AdvisoryFlag)
class AdvisoryFlagAdmin(ReadOnlyAdmin):
    list_display = ["id", "proposal", "result", "created_at"]
    list_select_related = ["proposal", "result"]
    search_fields = ["proposal__title", "reason"]
    fields = ["proposal", "result", "reason", "created_at"]
