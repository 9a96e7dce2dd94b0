"""Records and activity in the admin: read-only, as everywhere else (a record is written once,
by the dispatch that ended; a line of activity by the press it records)."""

from django.contrib import admin

from loopweb.history.models import Activity, DispatchRecord
from loopweb.runs.admin import ReadOnlyAdmin


@admin.register(DispatchRecord)
class DispatchRecordAdmin(ReadOnlyAdmin):
    list_display = [
        "dispatch_id",
        "ladder",
        "status",
        "started_at",
        "started_by_name",
        "ended_at",
        "stopped_by_name",
    ]
    list_select_related = ["ladder", "standing"]
    search_fields = ["dispatch_id", "ladder__name"]
    hidden = ["slot_totals"]  # thousands of cells: read them through the API or the console

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("standing")
            .defer("standing__bodies", "standing__slots")
        )


@admin.register(Activity)
class ActivityAdmin(ReadOnlyAdmin):
    list_display = ["at", "ladder", "action", "by_name", "dispatch_id", "detail"]
    list_filter = ["action"]
    list_select_related = ["ladder"]
    search_fields = ["ladder__name", "by_name", "dispatch_id"]
    date_hierarchy = "at"
