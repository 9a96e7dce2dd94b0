"""What a review may be: the checks ``POST /api/runs/{id}/reviews`` and the console's review form
both read, so the browser and the API refuse the same things with the same messages."""

from loopweb.runs.api import fields as f
from loopweb.runs.models import Review, ReviewVerdict


class ReviewSerializer(f.ModelSerializer):
    aestheticRating = f.IntegerField(source="aesthetic_rating", min_value=1, max_value=5)
    verdict = f.ChoiceField(
        choices=ReviewVerdict.values, required=False, allow_null=True, allow_blank=True
    )
    reviewer = f.CharField(source="reviewer.username", read_only=True)
    createdAt = f.DateTimeField(source="created_at", read_only=True)
    writeup = f.CharField(max_length=20000, allow_blank=True, default="")

    class Meta:
        model = Review
        fields = ["id", "run", "reviewer", "aestheticRating", "writeup", "verdict", "createdAt"]
        read_only_fields = ["id", "run"]
