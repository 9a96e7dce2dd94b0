from rest_framework import serializers

from ladders.config import MAX_RUNGS
from ladders.inputs import LadderConfigSerializer
from loopweb.runs.api import fields as f

__all__ = ["LadderConfigSerializer"]


class RungOrderSerializer(serializers.Serializer):
    order = f.ListField(child=f.CharField(max_length=40), max_length=MAX_RUNGS, unique=True)


class StopSerializer(serializers.Serializer):
    cancelRunning = f.BooleanField(default=False)


class RetrySerializer(serializers.Serializer):
    climber = f.CharField(max_length=500)


class DispatchJournalSerializer(serializers.Serializer):
    evalset = f.CharField(max_length=128)
