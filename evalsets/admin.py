"""The admin inspects the verify gate. It creates nothing: evalsets, runs and proposals are
written through the services (REST), so every rule applies; results come only from the gate.
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


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Evalset)
class EvalsetAdmin(ReadOnlyAdmin):
    list_display = ["name", "hash", "pin_count", "created_by", "created_at"]
    search_fields = ["name", "hash"]
    date_hierarchy = "created_at"
    readonly_fields = ["hash", "pins", "created_by", "created_at"]

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
    readonly_fields = ["evalset", "journaled_at", "recorded_at", "summary", "journaled_by"]

    @admin.display(description="passed")
    def passed(self, run):
        return run.summary.get("passed")

    @admin.display(description="failed")
    def failed(self, run):
        return run.summary.get("failed")


class OutcomeResultInline(admin.TabularInline):
    model = OutcomeResult
    extra = 0
    can_delete = False
    fields = [
        "checkpoint",
        "verdict",
        "baseline",
        "current",
        "tolerance",
        "cost_read",
        "measured_at",
    ]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyAdmin):
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
    readonly_fields = [
        "owner",
        "authored_by",
        "applicable",
        "outcome_evalset",
        "evalset",
        "waits_on_grains",
        "created_at",
        "applied_at",
        "verify_complete",
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

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields]


@admin.register(RevertDraft)
class RevertDraftAdmin(ReadOnlyAdmin):
    list_display = ["id", "proposal", "severity", "result", "created_at"]
    list_filter = ["severity"]
    list_select_related = ["proposal", "result"]
    search_fields = ["proposal__title", "reason"]
    readonly_fields = ["proposal", "result", "severity", "reason", "created_at"]


@admin.register(AdvisoryFlag)
class AdvisoryFlagAdmin(ReadOnlyAdmin):
    list_display = ["id", "proposal", "result", "created_at"]
    list_select_related = ["proposal", "result"]
    search_fields = ["proposal__title", "reason"]
    readonly_fields = ["proposal", "result", "reason", "created_at"]
