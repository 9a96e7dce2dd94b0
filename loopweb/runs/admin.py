"""The run substrate in the admin. What the services own — jobs, runs, reviews and the case
versions runs are pinned to — is read-only here (``ReadOnlyAdmin``): a write outside the services
would skip their locks, their rules and the change stamps every board reads. What staff may do
to them, the actions do through the same services as the console and the API."""

from collections.abc import Sequence

from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db.models import Model
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from loopweb.runs import budgeting, services
from loopweb.runs.errors import Conflict
from loopweb.runs.models import (
    Account,
    ApiToken,
    Case,
    CaseVersion,
    ChecklistOverride,
    Combination,
    CoverageGroup,
    GGConfiguration,
    GroupMember,
    Job,
    ModelEntry,
    ProviderBudget,
    Review,
    Run,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the services own: listed, filtered, searched and shown field by field, all read-only
    (``fields`` first, then every other field of the model but ``hidden``, so a field added
    later is shown too), never added, changed or deleted here."""

    fields: Sequence[str] = ()
    #: Fields left off the change page on purpose.
    hidden: Sequence[str] = ()

    def get_fields(self, request, obj=None):
        listed = list(self.fields)
        rest = [
            field.name
            for field in self.opts.concrete_fields
            if not field.primary_key and field.name not in (*listed, *self.hidden)
        ]
        return [*listed, *rest]

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    """The rows of a ``ReadOnlyAdmin``'s model shown under another row, each linked to its page."""

    extra = 0
    can_delete = False
    show_change_link = True
    fields: Sequence[str] = ()

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def admin_link(obj: Model | None, text: str | None = None):
    """A link to the object's admin page, or None (shown as the admin's empty value)."""
    if obj is None:
        return None
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text or obj)


def related(obj: Model, name: str) -> Model | None:
    """The object at the other end of a reverse one-to-one relation, or None."""
    try:
        return getattr(obj, name)
    except ObjectDoesNotExist:
        return None


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


class CaseVersionInline(ReadOnlyInline):
    model = CaseVersion
    fields = ["version", "ingested_at", "legacy", "variants", "engines", "checklist"]


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "kind"]
    list_filter = ["kind"]
    search_fields = ["slug", "title"]
    inlines = [CaseVersionInline]


@admin.register(CaseVersion)
class CaseVersionAdmin(ReadOnlyAdmin):
    """Versions are ingested over the API (``POST /api/cases/{slug}/versions/``); runs are rated
    against the checklist of the version they are pinned to."""

    list_display = ["case", "version", "ingested_at", "legacy"]
    list_filter = ["legacy", "case__kind"]
    list_select_related = ["case"]
    search_fields = ["case__slug", "version"]
    fields = ["case", "version", "ingested_at", "legacy", "variants", "engines", "checklist"]


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
class JobAdmin(ReadOnlyAdmin):
    """Jobs change state through the driver protocol, the launch passes and a cancel; the
    cancel action here is the API's ``POST /api/jobs/{id}/cancel``, job by job."""

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
    date_hierarchy = "created_at"
    fields = [
        "status",
        "cancel_cause",
        "failure",
        "failure_detail",
        "run",
        "origin",
        "owner",
        "case",
        "version",
        "variant",
        "engine",
        "combination",
        "combination_cell",
        "cell_key",
        "attempt",
        "retry_count",
        "retries",
        "retry",
        "lease_holder",
        "lease_expires_at",
        "created_at",
        "updated_at",
        "started_at",
        "finished_at",
    ]
    actions = ["cancel_jobs"]

    @admin.display(description="run")
    def run(self, job):
        return admin_link(related(job, "run"))

    @admin.display(description="retry of")
    def retries(self, job):
        """The attempt this job is the automatic retry of."""
        return admin_link(related(job, "retry_of"))

    def has_cancel_permission(self, request) -> bool:
        """A cancel changes a job: staff whose permissions let them change jobs, not those who
        may only view them."""
        codename = get_permission_codename("change", self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")

    @admin.action(description="Cancel the selected jobs", permissions=["cancel"])
    def cancel_jobs(self, request, queryset):
        cancelled, refused = 0, []
        for job in queryset.order_by("pk"):
            try:
                services.cancel_job(job=job)  # one transaction per job, as the API's cancel
            except Conflict as exc:
                refused.append(exc.detail)
            else:
                cancelled += 1
        self.message_user(request, f"{cancelled} job{'' if cancelled == 1 else 's'} cancelled.")
        if refused:
            self.message_user(request, f"Not cancelled: {'; '.join(refused)}.", messages.WARNING)


class ReviewInline(ReadOnlyInline):
    model = Review
    fields = ["reviewer", "aesthetic_rating", "verdict", "writeup", "created_at"]


class ChecklistOverrideInline(ReadOnlyInline):
    """Reviewers' overrides of the run's checklist, kept as made (the latest of an item stands
    in the stored rating); written through the API and the run page only."""

    model = ChecklistOverride
    fields = ["item", "passed", "reviewer", "note", "created_at"]
    show_change_link = False


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    """Runs are stored by pushes and re-pushes: whether one counts, its rating and its cell are
    the services' to decide."""

    list_display = [
        "id",
        "cell_key",
        "outcome",
        "validator_rating",
        "stored_rating",
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
    fields = [
        "page",
        "job",
        "outcome",
        "validator_rating",
        "stored_rating",
        "build_loaded",
        "counted",
        "published",
        "signals",
        "case",
        "version",
        "variant",
        "engine",
        "combination",
        "combination_cell",
        "cell_key",
        "owner",
        "pushed_by",
        "finished_at",
        "commit",
        "merge_artifact",
        "record",
        "acceptance_rule",
        "created_at",
        "updated_at",
    ]
    inlines = [ReviewInline, ChecklistOverrideInline]

    @admin.display(description="console")
    def page(self, run):
        url = reverse("console:run-page", args=[run.pk])
        return format_html('<a href="{}">Open its page in the console</a>', url)

    @admin.display(description="signals")
    def signals(self, run):
        try:
            url = reverse("admin:signals_app_signal_changelist")
        except NoReverseMatch:
            return None
        return format_html('<a href="{}?run__id__exact={}">Its signals</a>', url, run.pk)


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    """Reviews are written by the reviewers themselves, in the console or over the API."""

    list_display = ["run", "reviewer", "aesthetic_rating", "verdict", "created_at"]
    list_filter = ["verdict", "aesthetic_rating"]
    list_select_related = ["run", "reviewer"]
    search_fields = ["=run__id", "reviewer__username"]
    fields = ["run", "reviewer", "aesthetic_rating", "verdict", "writeup", "created_at"]


@admin.register(ProviderBudget)
class ProviderBudgetAdmin(admin.ModelAdmin):
    """Staff set a budget's target and caps here; its state (back-off, starts, turns) belongs to
    the claims and releases, so it is shown, never edited. Saves and deletes go through the same
    service as the console's and the API's (``budgeting.save_budget``)."""

    list_display = [
        "__str__",
        "max_in_flight",
        "per_minute",
        "enabled",
        "in_flight",
        "started_last_minute",
        "effective_cap",
    ]
    list_filter = ["enabled", "provider"]
    search_fields = ["provider", "model"]
    fields = [
        "provider",
        "model",
        "max_in_flight",
        "per_minute",
        "enabled",
        "in_flight",
        "started_last_minute",
        "effective_cap",
        "backoff_until",
    ]
    readonly_fields = [
        "in_flight",
        "started_last_minute",
        "effective_cap",
        "backoff_until",
    ]

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        # The page's figures at once (two queries), not two a row.
        shown = list(changelist.result_list)
        figures = budgeting.figures(shown)
        for budget in shown:
            budget.figures = figures[budget.pk]
        return changelist

    @staticmethod
    def _figures(budget) -> budgeting.Figures | None:
        if budget.pk is None:
            return None
        if getattr(budget, "figures", None) is None:
            budget.figures = budgeting.figures([budget])[budget.pk]
        return budget.figures

    @admin.display(description="in flight")
    def in_flight(self, budget):
        figures = self._figures(budget)
        return "-" if figures is None else figures.in_flight

    @admin.display(description="started in the last minute")
    def started_last_minute(self, budget):
        figures = self._figures(budget)
        return "-" if figures is None else figures.started_last_minute

    @admin.display(description="effective cap (in flight / per minute)")
    def effective_cap(self, budget):
        figures = self._figures(budget)
        if figures is None:
            return "-"
        caps = (figures.in_flight_cap, figures.per_minute_cap)
        text = " / ".join("none" if cap is None else str(cap) for cap in caps)
        return text if figures.factor >= 1 else f"{text} (backed off ×{figures.factor:g})"

    def save_model(self, request, obj, form, change):
        values = {name: form.cleaned_data.get(name) for name in budgeting.SETTINGS}
        try:
            saved = budgeting.save_budget(budget=obj if change else None, values=values)
        except Conflict as exc:
            raise ValidationError(str(exc)) from exc
        obj.pk = saved.pk

    def delete_model(self, request, obj):
        budgeting.delete_budget(budget=obj)

    def delete_queryset(self, request, queryset):
        for budget in queryset:
            budgeting.delete_budget(budget=budget)
