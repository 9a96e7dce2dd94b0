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
    schemaVersion = s.IntegerField(
        help_text="The version of the standing's document the record reads (docs/exports.md)."
    )
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
    reused = s.IntegerField(
        required=False,
        help_text="Of done, the runs from before the Run that its slots read again (another "
        "dispatch's, launched by hand or pushed without a job): not launched, nor counted in "
        "the totals, again (absent from records written before it was counted).",
    )


class RecordSummarySerializer(HeadSerializer):
    slotCounts = s.DictField(child=s.IntegerField())
    runs = RunsSerializer()
    totals = TotalsSerializer()
    climbers = RecordClimberSerializer(many=True)


class PassRateSerializer(s.Serializer):
    passed = s.IntegerField(help_text="The counted runs that cleared the gate's floor.")
    counted = s.IntegerField()
    low = s.FloatField(help_text="The 95 % Wilson interval's lower bound (docs/statistics.md).")
    high = s.FloatField(help_text="The 95 % Wilson interval's upper bound.")


PASS_RATE_HELP = "The slot's pass rate with its 95 % Wilson interval; null when nothing counted."


class SlotSerializer(s.Serializer):
    rung = s.CharField()
    status = s.CharField()
    verdict = s.CharField(allow_null=True)
    tally = s.DictField(child=s.IntegerField(), allow_null=True)
    passRate = PassRateSerializer(allow_null=True, help_text=PASS_RATE_HELP)
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


VERDICTS = ["up", "down", "same", "inconclusive", "new", "gone"]


class ClimberSignificanceSerializer(s.Serializer):
    verdict = s.ChoiceField(
        choices=VERDICTS,
        help_text="up or down only when the height changed and adjustedP < alpha; a change that "
        "is not significant is inconclusive.",
    )
    pValue = s.FloatField(
        allow_null=True,
        help_text="The smallest Fisher exact p-value over the rungs between the two heights "
        "(null unless the height changed).",
    )
    adjustedP = s.FloatField(
        allow_null=True, help_text="Holm-adjusted over the climbers whose height changed."
    )


class EvidenceSideSerializer(s.Serializer):
    """A side's pass rate on the rung: its counts and their 95 % Wilson interval."""

    passed = s.IntegerField(help_text="The counted runs that cleared the gate's floor.")
    counted = s.IntegerField()
    low = s.FloatField(allow_null=True, help_text="The interval's lower bound (null: none).")
    high = s.FloatField(allow_null=True, help_text="The interval's upper bound.")


class EvidenceSerializer(s.Serializer):
    rung = s.IntegerField(help_text="The rung's position, 1-based (rungs pair by position).")
    a = EvidenceSideSerializer()
    b = EvidenceSideSerializer()
    pValue = s.FloatField(help_text="Fisher's exact test, two-sided, between the two sides.")


class ComparedClimberSerializer(s.Serializer):
    key = s.CharField()
    label = s.CharField()
    a = SideSerializer(allow_null=True)
    b = SideSerializer(allow_null=True)
    change = s.ChoiceField(choices=["up", "down", "same", "new", "gone"])
    significance = ClimberSignificanceSerializer()
    evidence = EvidenceSerializer(many=True)
    totals = TotalsComparedSerializer()


class FlippedSerializer(s.Serializer):
    climber = s.CharField()
    label = s.CharField(help_text="The climber as the console names it.")
    rung = s.CharField()
    rungNumber = s.IntegerField()
    a = s.CharField()
    b = s.CharField()


class FlipsSerializer(s.Serializer):
    up = s.IntegerField(help_text="Slots decided in both records that went failed → passed.")
    down = s.IntegerField(help_text="Slots decided in both records that went passed → failed.")


class PowerSerializer(s.Serializer):
    change = s.FloatField(help_text="The change in a rung's pass rate planned for (0.3: 30 %).")
    alpha = s.FloatField()
    power = s.FloatField()
    runsPerRung = s.IntegerField(
        help_text="Runs per rung that tell such a change from chance, around a 50 % pass rate."
    )
    fewestRunsPerRung = s.DictField(
        child=s.IntegerField(allow_null=True),
        help_text="{a, b}: the fewest runs any rung of each record's configuration asked for.",
    )


class SignificanceSerializer(s.Serializer):
    alpha = s.FloatField()
    test = s.ChoiceField(choices=["fisher_exact"])
    correction = s.ChoiceField(choices=["holm"])
    flips = FlipsSerializer()
    pValue = s.FloatField(help_text="McNemar's exact test (binomial) on the flipped slots.")
    power = PowerSerializer()


class ConfigurationDifferenceSerializer(s.Serializer):
    what = s.CharField(
        help_text="rungs, rungs.N (a pin), runsPerRung or rungs.N.runs, gate.<key>, "
        "retryCount, outerAxis, runsInFlightLimit or climbers (the keys only in each side)."
    )
    a = s.JSONField()
    b = s.JSONField()


class CompareSerializer(s.Serializer):
    a = HeadSerializer()
    b = HeadSerializer()
    climbers = ComparedClimberSerializer(many=True)
    flipped = FlippedSerializer(
        many=True, help_text="Slots decided in both records whose verdict changed."
    )
    decidedInOne = FlippedSerializer(
        many=True,
        help_text="Slots decided (passed or failed) in one record only: skipped or pending in "
        "the other, so no verdict changed.",
    )
    changes = s.DictField(child=s.IntegerField())
    verdicts = s.DictField(child=s.IntegerField(), help_text="Climbers by significance verdict.")
    significance = SignificanceSerializer()
    configurationDiffers = ConfigurationDifferenceSerializer(many=True)
    totals = TotalsComparedSerializer()
