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


TEXTS = [
    '{"a":1,"b":[1.5,null,true,false],"c":{"d":"été 好 \\u2028 \\" \\\\"}}',
    "[]",
    '""',
    '{"a":1,"a":2}',  # the last of a repeated key, as json keeps it
    "[0.1, 1e20, 5e-324, -0.0, 1.0, 3]",
    # What orjson refuses or reads otherwise: integers past 64 bits (a float by orjson), NaN and
    # Infinity (which json writes), a lone surrogate, a number past a double.
    "[18446744073709551616, -9223372036854775809, 1180591620717411303424]",
    '{"huge": 99999999999999999999999, "n": 1}',
    "[NaN, Infinity, -Infinity]",
    '"\\ud800"',
    '"\ud800"',  # the surrogate itself, not its escape: not UTF-8
    "[1e400]",
]


@pytest.mark.parametrize("text", TEXTS)
def test_it_reads_what_json_reads(text):
    read, expected = jsonbytes.loads(text), json.loads(text)
    # Compared as json writes them: NaN is not equal to itself, and 1 == 1.0.
    assert json.dumps(read) == json.dumps(expected)
    assert type(read) is type(expected)


@pytest.mark.parametrize("text", ["", "[1,", "{'a': 1}", "nul"])
def test_what_is_not_json_is_refused_as_json_refuses_it(text):
    with pytest.raises(json.JSONDecodeError):
        jsonbytes.loads(text)
