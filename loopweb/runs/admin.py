from django.contrib import admin

from loopweb.runs.models import (
    Account,
    ApiToken,
    Case,
    CaseVersion,
    Combination,
    CoverageGroup,
    GGConfiguration,
    GroupMember,
    Job,
    ModelEntry,
    Review,
    Run,
)


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["user", "role", "runs_in_flight_limit"]
    list_filter = ["role"]
    search_fields = ["user__username"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "expires_at"]
    search_fields = ["user__username", "prefix", "name"]
    readonly_fields = ["digest", "prefix", "created_at"]


class CaseVersionInline(admin.TabularInline):
    model = CaseVersion
    extra = 0


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "kind"]
    list_filter = ["kind"]
    search_fields = ["slug", "title"]
    inlines = [CaseVersionInline]


@admin.register(CaseVersion)
class CaseVersionAdmin(admin.ModelAdmin):
    list_display = ["case", "version", "ingested_at", "legacy"]
    list_filter = ["legacy", "case__kind"]
    search_fields = ["case__slug", "version"]


@admin.register(ModelEntry)
class ModelEntryAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "launchable"]
    list_filter = ["launchable", "provider"]
    search_fields = ["name", "provider"]


@admin.register(GGConfiguration)
class GGConfigurationAdmin(admin.ModelAdmin):
    list_display = ["name", "roles"]
    search_fields = ["name"]


@admin.register(Combination)
class CombinationAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "harness", "model", "provider", "configuration_id"]
    list_filter = ["kind"]
    search_fields = ["key", "model", "harness"]
    readonly_fields = ["key"]


class GroupMemberInline(admin.TabularInline):
    model = GroupMember
    extra = 0
    autocomplete_fields = ["combination"]


@admin.register(CoverageGroup)
class CoverageGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "kind"]
    search_fields = ["name", "owner__username"]
    inlines = [GroupMemberInline]


class OriginFilter(admin.SimpleListFilter):
    """Who launched it: a ladder's dispatch, a coverage plan, or a hand launch."""

    title = "origin"
    parameter_name = "origin_kind"
    field = "origin"

    def lookups(self, request, model_admin):
        return [("ladder", "Ladder dispatch"), ("plan", "Coverage plan"), ("manual", "By hand")]

    def queryset(self, request, queryset):
        value = self.value()
        if value == "manual":
            return queryset.filter(**{self.field: "manual"})
        if value in ("ladder", "plan"):
            return queryset.filter(**{f"{self.field}__startswith": f"{value}:"})
        return queryset


class RunOriginFilter(OriginFilter):
    """A run's origin is its job's; a run pushed without a job was launched outside Loopweb."""

    field = "job__origin"

    def lookups(self, request, model_admin):
        return [*super().lookups(request, model_admin), ("outside", "Outside Loopweb (no job)")]

    def queryset(self, request, queryset):
        if self.value() == "outside":
            return queryset.filter(job__isnull=True)
        return super().queryset(request, queryset)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "status",
        "origin",
        "cell_key",
        "owner",
        "attempt",
        "retry_count",
        "failure",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", OriginFilter, "failure", "attempt"]
    list_select_related = ["owner"]
    search_fields = ["origin", "cell_key"]
    raw_id_fields = ["retry", "combination", "owner", "lease_holder"]
    date_hierarchy = "created_at"


class ReviewInline(admin.TabularInline):
    model = Review
    extra = 0
    raw_id_fields = ["reviewer"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "cell_key",
        "outcome",
        "validator_rating",
        "counted",
        "published",
        "finished_at",
    ]
    list_filter = [
        "outcome",
        "validator_rating",
        RunOriginFilter,
        "counted",
        "published",
        "build_loaded",
        "reviews__aesthetic_rating",
    ]
    search_fields = ["cell_key", "commit", "merge_artifact", "job__origin"]
    raw_id_fields = ["job", "combination", "owner", "pushed_by"]
    inlines = [ReviewInline]


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["run", "reviewer", "aesthetic_rating", "verdict", "created_at"]
    list_filter = ["verdict", "aesthetic_rating"]
    raw_id_fields = ["run", "reviewer"]
