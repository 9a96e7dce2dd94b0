"""Geometry of the small inline SVG on a proposal's page: baseline vs current per checkpoint.

Pure: it takes anything with ``checkpoint_label``, ``baseline``, ``current`` and ``verdict`` and
returns numbers the template draws. No JavaScript, no build step.
"""

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 560, 200
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 40


@dataclass(frozen=True)
class Point:
    x: float
    y_baseline: float
    y_current: float
    label: str
    baseline: float
    current: float
    verdict: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    points: list[Point]
    baseline_line: str  # an SVG polyline's "points"
    current_line: str
    low: float
    high: float
    y_low: float
    y_high: float
    left: int
    right_edge: int


def outcome_chart(results: Sequence) -> Chart | None:
    """None when there is nothing to draw."""
    if not results:
        return None
    values = [v for r in results for v in (r.baseline, r.current)]
    low, high = min(values), max(values)
    if high == low:
        low, high = low - 1, high + 1
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def y(value: float) -> float:
        return round(TOP + (high - value) / (high - low) * plot_h, 1)

    step = plot_w / len(results)
    points = [
        Point(
            x=round(LEFT + step * (i + 0.5), 1),
            y_baseline=y(r.baseline),
            y_current=y(r.current),
            label=r.checkpoint_label,
            baseline=r.baseline,
            current=r.current,
            verdict=r.verdict,
        )
        for i, r in enumerate(results)
    ]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        points=points,
        baseline_line=" ".join(f"{p.x},{p.y_baseline}" for p in points),
        current_line=" ".join(f"{p.x},{p.y_current}" for p in points),
        low=low,
        high=high,
        y_low=y(low),
        y_high=y(high),
        left=LEFT,
        right_edge=WIDTH - RIGHT,
    )


@dataclass(frozen=True)
class SeriesPoint:
    x: float
    y: float
    at: object
    value: float


@dataclass(frozen=True)
class Marker:
    x: float
    label: str


@dataclass(frozen=True)
class Series:
    width: int
    height: int
    line: str
    points: list[SeriesPoint]
    markers: list[Marker]
    low: float
    high: float
    y_low: float
    y_high: float
    left: int
    right_edge: int


def series_chart(values: Sequence[tuple], markers: Sequence[tuple] = ()) -> Series | None:
    """A field of an evalset's journaled runs over time: ``values`` are (when, value) pairs,
    ``markers`` (when, label) pairs drawn as vertical lines (a proposal's apply). None when
    there is nothing to draw."""
    if not values:
        return None
    times = [t for t, _ in values] + [t for t, _ in markers]
    first, last = min(times), max(times)
    span = (last - first).total_seconds() or 1.0
    numbers = [v for _, v in values]
    low, high = min(numbers), max(numbers)
    if high == low:
        low, high = low - 1, high + 1
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x(when) -> float:
        offset = (when - first).total_seconds() / span if len(times) > 1 else 0.5
        return round(LEFT + offset * plot_w, 1)

    def y(value: float) -> float:
        return round(TOP + (high - value) / (high - low) * plot_h, 1)

    points = [
        SeriesPoint(x=x(t), y=y(v), at=t, value=v) for t, v in sorted(values, key=lambda p: p[0])
    ]
    return Series(
        width=WIDTH,
        height=HEIGHT,
        line=" ".join(f"{p.x},{p.y}" for p in points),
        points=points,
        markers=[Marker(x=x(t), label=label) for t, label in markers],
        low=low,
        high=high,
        y_low=y(low),
        y_high=y(high),
        left=LEFT,
        right_edge=WIDTH - RIGHT,
    )
