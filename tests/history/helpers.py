"""Run records with metrics, and reading the history through the API."""

from tests.ladders.builders import PERFECT
from tests.runs.helpers import BROKEN


def costing(record: dict, usd: int, tokens_in: int = 0, tokens_out: int = 0, wall: int = 0):
    return {
        **record,
        "metrics": {
            "usd_micros": usd,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "wall_ms": wall,
        },
    }


PAID = costing(PERFECT, 1000, 100, 10, 5000)
PAID_BROKEN = costing(BROKEN, 700, 70, 7, 3000)


def history(api, ladder, **params) -> dict:
    response = api.get(f"/api/ladders/{ladder.pk}/history", params)
    assert response.status_code == 200, response.content
    return response.json()


def record(api, ladder, record_id) -> dict:
    response = api.get(f"/api/ladders/{ladder.pk}/history/{record_id}")
    assert response.status_code == 200, response.content
    return response.json()


def compare(api, ladder, a, b) -> dict:
    response = api.get(f"/api/ladders/{ladder.pk}/compare", {"a": a, "b": b})
    assert response.status_code == 200, response.content
    return response.json()
