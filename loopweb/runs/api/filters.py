import django_filters

from loopweb.runs.models import Job, JobStatus, Run


class JobFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=JobStatus.choices)
    origin = django_filters.CharFilter(field_name="origin", lookup_expr="startswith")
    cellKey = django_filters.CharFilter(field_name="cell_key")

    class Meta:
        model = Job
        fields = ["status", "origin", "cellKey"]


class RunFilter(django_filters.FilterSet):
    cellKey = django_filters.CharFilter(field_name="cell_key")
    published = django_filters.BooleanFilter()
    reviewed = django_filters.BooleanFilter(method="filter_reviewed")
    outcome = django_filters.CharFilter()

    class Meta:
        model = Run
        fields = ["cellKey", "published", "reviewed", "outcome"]

    def filter_reviewed(self, queryset, name, value):
        return queryset.filter(review_count__gt=0) if value else queryset.filter(review_count=0)
