"""The history's responses as the OpenAPI schema states them (docs/exports.md for the CSV).
Documentation only: the views build plain data (``records``, ``compare``)."""

from rest_framework import serializers as s

from ladders.statuses import CLIMBER_STATUSES

CLIMBER_STATUS_HELP = (
    "running or blocked while its dispatch runs; failed or completed; stopped: its dispatch was "
    "stopped while it was running or blocked, at currentRung."
)


class TotalsSerializer(s.Serializer):
    usdMicros = s.IntegerField()
    inputTokens = s.IntegerField()
    outputTokens = s.IntegerField()
    wallMs = s.IntegerField()
    notReported = s.IntegerField(help_text="Runs that reported no metrics (never counted as 0).")
    runs = s.IntegerField(help_text="Runs these totals cover.")


class HeadSerializer(s.Serializer):
    id = s.JSONField(help_text="The record's id, or current for a dispatch not recorded yet.")
    dispatch = s.CharField()
    status = s.CharField()
    configuration = s.CharField(help_text="A digest of the configuration the dispatch ran.")
    startedAt = s.DateTimeField()
    endedAt = s.DateTimeField(allow_null=True)
    startedBy = s.CharField(allow_null=True)
    stoppedBy = s.CharField(allow_null=True)
    cancelRunning = s.BooleanField()
    cancelled = s.IntegerField()


class RecordClimberSerializer(s.Serializer):
    key = s.CharField()
    label = s.CharField()
    reached = s.IntegerField(help_text="The highest rung passed (1 for the lowest), 0 for none.")
    status = s.ChoiceField(choices=CLIMBER_STATUSES, help_text=CLIMBER_STATUS_HELP)
    blockedReason = s.CharField(allow_null=True)
    currentRung = s.CharField(
        allow_null=True, help_text="The rung it stands on, failed, or was stopped at."
    )
    totals = TotalsSerializer()


class RunsSerializer(s.Serializer):
    total = s.IntegerField(help_text="The sum over rung slots of the rung's target runs.")
    done = s.IntegerField(help_text="The runs that need no more executing.")
    inFlight = s.IntegerField(help_text="The jobs the dispatch launched still in flight.")
    skippedByStop = s.IntegerField(
        required=False,
        help_text="Of done, the runs a Stop left unrun: the targets of the slots it skipped, less "
        "the runs they held and the jobs it let finish (0 unless stopped; absent from records "
        "written before it was counted).",
    )


class RecordSummarySerializer(HeadSerializer):
    slotCounts = s.DictField(child=s.IntegerField())
    runs = RunsSerializer()
    totals = TotalsSerializer()
    climbers = RecordClimberSerializer(many=True)


class SlotSerializer(s.Serializer):
    rung = s.CharField()
    status = s.CharField()
    verdict = s.CharField(allow_null=True)
    tally = s.DictField(child=s.IntegerField(), allow_null=True)
    totals = TotalsSerializer(allow_null=True)


class RecordClimberWithSlotsSerializer(RecordClimberSerializer):
    slots = SlotSerializer(many=True)


class RecordSerializer(RecordSummarySerializer):
    gate = s.DictField()
    outerAxis = s.CharField()
    runsInFlightLimit = s.IntegerField()
    retryCount = s.IntegerField()
    rungs = s.ListField(child=s.DictField())
    climbers = RecordClimberWithSlotsSerializer(many=True)


class SideSerializer(s.Serializer):
    reached = s.IntegerField()
    status = s.ChoiceField(choices=CLIMBER_STATUSES, help_text=CLIMBER_STATUS_HELP)


class TotalsComparedSerializer(s.Serializer):
    a = TotalsSerializer(allow_null=True)
    b = TotalsSerializer(allow_null=True)
    difference = TotalsSerializer(allow_null=True, help_text="b − a, field by field.")


class ComparedClimberSerializer(s.Serializer):
    key = s.CharField()
    label = s.CharField()
    a = SideSerializer(allow_null=True)
    b = SideSerializer(allow_null=True)
    change = s.ChoiceField(choices=["up", "down", "same", "new", "gone"])
    totals = TotalsComparedSerializer()


class FlippedSerializer(s.Serializer):
    climber = s.CharField()
    rung = s.CharField()
    rungNumber = s.IntegerField()
    a = s.CharField()
    b = s.CharField()


class CompareSerializer(s.Serializer):
    a = HeadSerializer()
    b = HeadSerializer()
    climbers = ComparedClimberSerializer(many=True)
    flipped = FlippedSerializer(many=True)
    changes = s.DictField(child=s.IntegerField())
    totals = TotalsComparedSerializer()
