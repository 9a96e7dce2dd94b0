"""Query filters. A filter given a value it cannot read is a 400 naming it, never ignored:
``?reviewed=maybe`` is not "no filter", and neither is ``?reviewed=``."""

import django_filters
from django import forms

from loopweb.runs.models import Job, JobStatus, Run


class StrictBooleanField(forms.Field):
    """``true`` or ``false``, as the schema's boolean query parameters are written."""

    def to_python(self, value):
        if value is None:
            return None
        if value in ("true", "false"):
            return value == "true"
        raise forms.ValidationError("Must be true or false.", code="invalid")


class StrictChoiceField(forms.ChoiceField):
    """One of the choices; an empty value is not one."""

    def to_python(self, value):
        return None if value is None else str(value)

    def validate(self, value):
        if value is not None and not self.valid_value(value):
            raise forms.ValidationError(
                f"One of: {', '.join(str(k) for k, _ in self.choices)}.", code="invalid_choice"
            )


class BooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class ChoiceFilter(django_filters.ChoiceFilter):
    field_class = StrictChoiceField


class JobFilter(django_filters.FilterSet):
    status = ChoiceFilter(choices=JobStatus.choices)
    origin = django_filters.CharFilter(field_name="origin", lookup_expr="startswith")
    cellKey = django_filters.CharFilter(field_name="cell_key")

    class Meta:
        model = Job
        fields = ["status", "origin", "cellKey"]


class RunFilter(django_filters.FilterSet):
    cellKey = django_filters.CharFilter(field_name="cell_key")
    published = BooleanFilter()
    reviewed = BooleanFilter(method="filter_reviewed")
    outcome = django_filters.CharFilter()

    class Meta:
        model = Run
        fields = ["cellKey", "published", "reviewed", "outcome"]

    def filter_reviewed(self, queryset, name, value):
        return queryset.filter(review_count__gt=0) if value else queryset.filter(review_count=0)
