import pytest

from loopweb.runs.validators import build_loaded, rate, rating_at_least
from tests.factories import CHECKLIST


def record(passed: set[str], build="ok"):
    return {
        "checklist": {item["id"]: item["id"] in passed for item in CHECKLIST},
        "toolchain": {"build": build, "loaded": True},
    }


ALL = {"starts", "jump", "score", "music", "pause"}


@pytest.mark.parametrize(
    ("passed", "rating"),
    [
        (ALL, "flawless"),
        (ALL - {"pause"}, "great"),  # 80 %, criticals pass
        (ALL - {"pause", "music"}, "passable"),  # 60 %
        ({"starts", "jump"}, "scuffed"),  # 40 %: criticals pass but under half
        (ALL - {"jump"}, "scuffed"),  # 80 % but a critical item failed
        ({"music"}, "scuffed"),
        (set(), "broken"),
    ],
)
def test_every_rating_band(passed, rating):
    assert rate(record(passed), CHECKLIST) == rating


def test_a_failed_build_is_broken_whatever_the_checklist_says():
    assert rate(record(ALL, build="failed"), CHECKLIST) == "broken"


def test_an_item_the_record_does_not_mention_did_not_pass():
    assert rate({"checklist": {"starts": True, "jump": True, "score": True}}, CHECKLIST) == (
        "passable"
    )


def test_a_record_without_a_checklist_is_broken():
    assert rate({}, CHECKLIST) == "broken"


def test_exactly_half_is_passable():
    checklist = [{"id": str(i), "critical": False} for i in range(4)]
    assert rate({"checklist": {"0": True, "1": True}}, checklist) == "passable"


def test_build_loaded_comes_from_the_toolchain():
    assert build_loaded({"toolchain": {"loaded": True}}) is True
    assert build_loaded({"toolchain": {"loaded": False}}) is False
    assert build_loaded({"toolchain": {}}) is None
    assert build_loaded({}) is None


def test_rating_order():
    assert rating_at_least("flawless", "broken")
    assert rating_at_least("scuffed", "scuffed")
    assert not rating_at_least("broken", "scuffed")
