from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ValidationError
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from ladders import progress, services
from ladders.models import (
    Dispatch,
    DispatchClimber,
    DispatchStatus,
    Ladder,
    LadderCombination,
    LadderGroup,
    Rung,
)
from ladders.selectors import ladder_summaries
from ladders.wording import status_label
from loopweb.runs.errors import Conflict


class WordedChangeList(ChangeList):
    """A change list whose rows carry the ladder's status in the console's words
    (``status_word``), read for the whole page at once."""

    def get_results(self, request):
        super().get_results(request)
        rows = list(self.result_list)
        ladders = [getattr(row, "ladder", row) for row in rows]
        words = {s["id"]: status_label(s["status"]) for s in ladder_summaries(ladders)}
        for row, ladder in zip(rows, ladders, strict=True):
            row.status_word = words.get(ladder.pk, "")


def board_link(ladder_id: int):
    return format_html(
        '<a href="{}">Open its board</a>', reverse("console:board", args=[ladder_id])
    )


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
        "shown_status",
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

    readonly_fields = ["board"]

    def get_changelist(self, request, **kwargs):
        return WordedChangeList

    @admin.display(description="status", ordering="dispatch__status")
    def shown_status(self, ladder):
        return getattr(ladder, "status_word", "")

    @admin.display(description="board")
    def board(self, ladder):
        return board_link(ladder.pk) if ladder.pk else ""

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
        # Running or needing attention (a running dispatch's reading): what Stop stops.
        ladders = list(queryset.select_related("dispatch"))
        running = set()
        for ladder in ladders:
            dispatch = progress.dispatch_of(ladder)
            if dispatch is not None and dispatch.status == DispatchStatus.RUNNING:
                running.add(ladder.pk)
        under_way = progress.under_way_of(running)
        rows = [
            {
                "ladder": ladder,
                "running": ladder.pk in running,
                "under_way": under_way.get(ladder.pk, 0),
            }
            for ladder in ladders
        ]
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
    """Dispatches are read-only here: a Run makes one, Stop and Retry change one, through the
    same services as the console and the API (the actions below)."""

    list_display = [
        "dispatch_id",
        "ladder",
        "shown_status",
        "started_at",
        "ended_at",
        "passes",
        "board",
    ]
    list_filter = ["status"]
    list_select_related = ["ladder"]
    search_fields = ["dispatch_id", "ladder__name"]
    fields = ["dispatch_id", "ladder", "shown_status", "board", "started_at", "ended_at", "passes"]
    readonly_fields = fields
    inlines = [DispatchClimberInline]
    actions = ["stop_dispatches", "retry_blocked"]

    def get_changelist(self, request, **kwargs):
        return WordedChangeList

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    # Not named "status": a model field of that name would be shown instead.
    @admin.display(description="status", ordering="status")
    def shown_status(self, dispatch):
        word = getattr(dispatch, "status_word", None)
        if word is None:  # one dispatch's page: read its ladder alone
            [summary] = ladder_summaries([dispatch.ladder])
            word = status_label(summary["status"])
        return word

    @admin.display(description="board")
    def board(self, dispatch):
        return board_link(dispatch.ladder_id)

    @admin.action(description="Stop the selected dispatches")
    def stop_dispatches(self, request, queryset):
        for dispatch in queryset.select_related("ladder"):
            try:
                cancelled = services.stop_dispatch(
                    ladder=dispatch.ladder, cancel_running=False, by=request.user
                )
            except Conflict as exc:
                self.message_user(request, f"{dispatch.ladder}: {exc.detail}", messages.WARNING)
            else:
                self.message_user(
                    request, f"{dispatch.ladder}: stopped, {cancelled} job(s) cancelled."
                )

    @admin.action(description="Retry the selected dispatches' blocked climbers")
    def retry_blocked(self, request, queryset):
        for dispatch in queryset.select_related("ladder"):
            try:
                keys = services.retry_blocked(ladder=dispatch.ladder, by=request.user)
            except Conflict as exc:
                self.message_user(request, f"{dispatch.ladder}: {exc.detail}", messages.WARNING)
            else:
                self.message_user(request, f"{dispatch.ladder}: retried {len(keys)} climber(s).")
