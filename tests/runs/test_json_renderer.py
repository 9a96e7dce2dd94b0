"""The API's JSON renderer writes what DRF's would, byte for byte, only faster."""

import datetime
import decimal
import uuid
import zoneinfo

import pytest
from django.utils.translation import gettext_lazy
from rest_framework import renderers
from rest_framework.utils.serializer_helpers import ReturnDict

from ladders.models import DispatchStatus
from loopweb.runs.api.renderers import JSONRenderer

PARIS = zoneinfo.ZoneInfo("Europe/Paris")

ANSWERS = [
    {"id": 1, "name": "plain"},
    [],
    {},
    "text",
    None,
    {"when": datetime.datetime(2026, 12, 1, 21, 58, 49, 123456, tzinfo=datetime.UTC)},
    {"when": datetime.datetime(2026, 12, 1, 21, 58, tzinfo=PARIS)},
    {"day": datetime.date(2026, 12, 1), "at": datetime.time(9, 30)},
    {"uuid": uuid.UUID(int=7), "cost": decimal.Decimal("1.25"), "span": datetime.timedelta(1)},
    {"lazy": gettext_lazy("Not found."), "status": DispatchStatus.RUNNING},
    {"unicode": "été 好 \u2028 line \u2029 para", "quote": 'a "b" \\ c'},
    {1: "int key", 2.5: "float key", None: "none key"},
    {False: "bool key"},
    {"huge": 2**70, "negative": -(2**65), "float": 0.1 + 0.2, "exp": 1e20, "small": 5e-324},
    ReturnDict({"nested": [{"a": (1, 2)}, {"b": {"c": [None, True, False]}}]}, serializer=None),
]


@pytest.mark.parametrize("answer", ANSWERS)
def test_it_writes_what_drfs_renderer_writes(answer):
    assert JSONRenderer().render(answer) == renderers.JSONRenderer().render(answer)


def test_an_answer_neither_can_write_fails_as_drfs_does():
    with pytest.raises(TypeError):
        renderers.JSONRenderer().render({"x": object()})
    with pytest.raises(TypeError):
        JSONRenderer().render({"x": object()})


def test_a_number_json_cannot_hold_is_written_as_null():
    # DRF's renderer would fail the whole answer (a 500); JSON has no NaN or infinity.
    assert JSONRenderer().render({"x": float("nan"), "y": float("inf")}) == b'{"x":null,"y":null}'


def test_an_indented_answer_is_drfs_own():
    context = {"indent": 2}
    answer = {"a": [1, {"b": 2}]}
    assert JSONRenderer().render(answer, renderer_context=context) == (
        renderers.JSONRenderer().render(answer, renderer_context=context)
    )


def test_the_api_answers_through_it(settings):
    from rest_framework.settings import api_settings

    assert api_settings.DEFAULT_RENDERER_CLASSES == [JSONRenderer]
