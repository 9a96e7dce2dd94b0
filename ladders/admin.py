from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import ValidationError
from django.template.response import TemplateResponse

from ladders import services
from ladders.models import Dispatch, DispatchClimber, Ladder, LadderCombination, LadderGroup, Rung
from ladders.selectors import ladder_progress
from ladders.statuses import LIVE
from loopweb.runs.errors import Conflict


class RungInline(admin.TabularInline):
    model = Rung
    extra = 0
    fields = ["position", "rung_id", "case", "version", "variant", "engine", "runs"]
    readonly_fields = ["rung_id"]
    ordering = ["position"]


class LadderGroupInline(admin.TabularInline):
    model = LadderGroup
    extra = 0


class LadderCombinationInline(admin.TabularInline):
    model = LadderCombination
    extra = 0
    raw_id_fields = ["combination"]


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "owner",
        "dispatch_status",
        "outer_axis",
        "runs_per_cell",
        "retry_count",
        "updated_at",
    ]
    list_filter = ["outer_axis", "dispatch__status"]
    list_select_related = ["owner", "dispatch"]
    search_fields = ["name", "owner__username"]
    inlines = [RungInline, LadderGroupInline, LadderCombinationInline]
    filter_horizontal = ["reviewers"]
    actions = ["run_ladders", "stop_ladders", "stop_and_cancel_running"]

    @admin.display(description="dispatch", ordering="dispatch__status")
    def dispatch_status(self, ladder):
        dispatch = getattr(ladder, "dispatch", None)
        return dispatch.status if dispatch else "not run yet"

    @admin.action(description="Run the selected ladders")
    def run_ladders(self, request, queryset):
        for ladder in queryset:
            try:
                services.start_dispatch(ladder=ladder, by=request.user)
            except Conflict as exc:
                self.message_user(request, f"{ladder}: {exc.detail}", messages.WARNING)
            except ValidationError as exc:
                self.message_user(request, f"{ladder}: {' '.join(exc.messages)}", messages.ERROR)
            else:
                self.message_user(request, f"{ladder}: dispatch started.")

    @admin.action(description="Stop the selected ladders' dispatches")
    def stop_ladders(self, request, queryset):
        self._stop(request, queryset, cancel_running=False)

    @admin.action(description="Stop and cancel running jobs (asks first)")
    def stop_and_cancel_running(self, request, queryset):
        """Running jobs are partly or wholly paid for, so this asks first with the count."""
        if request.POST.get("confirm") == "yes":
            self._stop(request, queryset, cancel_running=True)
            return None
        rows = []
        for ladder in queryset:
            dispatch = ladder_progress(ladder)["dispatch"]
            running = dispatch is not None and dispatch["status"] in LIVE
            rows.append(
                {
                    "ladder": ladder,
                    "running": running,
                    "under_way": dispatch["runsUnderWay"] if running else 0,
                }
            )
        return TemplateResponse(
            request,
            "console/admin/stop_cancel_running.html",
            {
                **self.admin_site.each_context(request),
                "title": "Stop and cancel running jobs?",
                "opts": self.model._meta,
                "rows": rows,
                "total": sum(r["under_way"] for r in rows),
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
            },
        )

    def _stop(self, request, queryset, *, cancel_running: bool) -> None:
        for ladder in queryset:
            try:
                cancelled = services.stop_dispatch(
                    ladder=ladder, cancel_running=cancel_running, by=request.user
                )
            except Conflict as exc:
                self.message_user(request, f"{ladder}: {exc.detail}", messages.WARNING)
            else:
                self.message_user(request, f"{ladder}: stopped, {cancelled} job(s) cancelled.")


class DispatchClimberInline(admin.TabularInline):
    model = DispatchClimber
    extra = 0
    fields = ["position", "combination_key", "combination_cell", "verdicts", "retried_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Dispatch)
class DispatchAdmin(admin.ModelAdmin):
    list_display = ["dispatch_id", "ladder", "status", "started_at", "ended_at", "passes"]
    list_filter = ["status"]
    list_select_related = ["ladder"]
    search_fields = ["dispatch_id", "ladder__name"]
    readonly_fields = ["dispatch_id", "snapshot", "started_at", "ended_at", "passes"]
    inlines = [DispatchClimberInline]
