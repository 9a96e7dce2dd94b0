from rest_framework import serializers

from ladders.inputs import LadderConfigSerializer, QueueReviewSerializer
from ladders.models import ReviewReservation
from ladders.rung_checks import MAX_RUNGS
from loopweb.runs import json_fields as f

__all__ = ["LadderConfigSerializer", "QueueReviewSerializer"]


def slot_run_fields() -> dict[str, serializers.Field]:
    """A completed slot run as ``ladders.selectors.slot_run_entries`` gives it: the fields that
    a review queue's entry and a disagreement between reviewers begin with."""
    return {
        "run": serializers.IntegerField(),
        "rung": serializers.CharField(),
        "climber": serializers.CharField(),
        "validatorRating": serializers.CharField(allow_null=True),
        "finishedAt": serializers.DateTimeField(),
    }


class RungOrderSerializer(serializers.Serializer):
    order = f.ListField(child=f.CharField(max_length=40), max_length=MAX_RUNGS, unique=True)


class StopSerializer(serializers.Serializer):
    cancelRunning = f.BooleanField(default=False)


class RetrySerializer(serializers.Serializer):
    climber = f.CharField(max_length=500)


class DispatchJournalSerializer(serializers.Serializer):
    evalset = f.CharField(max_length=128)


class ReservationSerializer(serializers.ModelSerializer):
    run = serializers.IntegerField(source="run_id", read_only=True)
    reviewer = serializers.CharField(source="reviewer.username", read_only=True)
    expiresAt = serializers.DateTimeField(source="expires_at", read_only=True)

    class Meta:
        model = ReviewReservation
        fields = ["run", "reviewer", "expiresAt"]
