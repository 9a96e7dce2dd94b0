"""Records and activity in the admin: read-only, as everywhere else."""

from django.contrib import admin

from loopweb.history.models import Activity, DispatchRecord


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(DispatchRecord)
class DispatchRecordAdmin(ReadOnly):
    list_display = [
        "dispatch_id",
        "ladder",
        "status",
        "started_at",
        "started_by_name",
        "ended_at",
        "stopped_by_name",
    ]
    list_filter = ["status"]
    list_select_related = ["ladder"]
    search_fields = ["dispatch_id", "ladder__name"]
    exclude = ["slots"]  # thousands of cells: read them through the API or the console


@admin.register(Activity)
class ActivityAdmin(ReadOnly):
    list_display = ["at", "ladder", "action", "by_name", "dispatch_id", "detail"]
    list_filter = ["action"]
    list_select_related = ["ladder"]
    search_fields = ["ladder__name", "by_name", "dispatch_id"]
    date_hierarchy = "at"
