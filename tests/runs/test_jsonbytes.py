"""Compact JSON by orjson: what ``json.dumps`` writes with the same ``default``."""

import datetime
import json

import pytest

from loopweb.runs import jsonbytes

VALUES = [
    {"a": 1, "b": [1.5, None, True, False], "c": {"d": 'été 好 \u2028 \u2029 " \\'}},
    [],
    "",
    {1: "int key", 2.5: "float key", None: "none key"},
    {"huge": 2**70, "float": 0.1 + 0.2, "exp": 1e20, "tiny": 5e-324, "neg": -(2**63)},
    {
        "at": datetime.datetime(2026, 12, 1, 21, 58, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 1, 2),
    },
    ({"tuple": (1, 2)}, [("x", "y")]),
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("default", [str, repr])
def test_it_writes_what_json_writes(value, default):
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=default)
    assert jsonbytes.dumps(value, default) == expected.encode()


def test_a_value_default_refuses_is_refused_as_json_refuses_it():
    def refuse(value):
        raise TypeError(f"{type(value).__name__} is not JSON")

    with pytest.raises(TypeError):
        jsonbytes.dumps({"x": object()}, refuse)
    with pytest.raises(TypeError):
        jsonbytes.dumps({"x": object()})


def test_a_number_json_cannot_hold_is_written_as_null():
    assert jsonbytes.dumps([float("nan"), float("inf")]) == b"[null,null]"
