"""Height charts as server-rendered SVG: no script draws them, and each comes with a text
alternative (``aria`` title and description here, a table in the templates). Pure.

- ``bars``: one bar per climber up to the rung it reached, passed rungs filled and the rung it
  stopped at marked (failed, or blocked / running / stopped there);
- ``lines``: each climber's height across records, one line per climber.
"""

from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ladders.statuses import COMPLETED, FAILED
from loopweb.history.models import DispatchRecord

SORTS = ("height", "cost", "order")
PLOT_HEIGHT = 220
LEFT, BOTTOM, TOP, RIGHT = 44, 28, 10, 12
PALETTE = (
    "#3150d8",
    "#23884f",
    "#c93a3a",
    "#c98500",
    "#7a3fb0",
    "#0f8a8a",
    "#b5476b",
    "#5a6b1f",
    "#8a5a00",
    "#2f66d0",
    "#6b7280",
    "#a14d00",
)


def usd(micros: int | None) -> str:
    if micros is None:
        return "–"
    return f"${micros / 1_000_000:,.4f}" if micros < 10_000_000 else f"${micros / 1_000_000:,.2f}"


def usd_change(micros: int | None) -> str:
    """A difference in USD, signed."""
    if micros is None:
        return "–"
    return ("+" if micros >= 0 else "−") + usd(abs(micros))


def count(n: int | None) -> str:
    if n is None:
        return "–"
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    return f"{n:,}"


def duration(ms: int | None) -> str:
    if ms is None:
        return "–"
    seconds = ms / 1000
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class Bar:
    number: int  # the climber's place in climb order, from 1
    key: str
    label: str
    status: str
    reached: int
    marked: int | None  # the rung it stopped at (failed, blocked, running or stopped there)
    totals: dict

    @property
    def mark(self) -> str:
        return "failed" if self.status == FAILED else "stopped"

    @property
    def text(self) -> str:
        height = f"reached rung {self.reached}" if self.reached else "passed no rung"
        if self.marked is not None:
            verb = "failed" if self.status == FAILED else f"{self.status} at"
            height += f", {verb} rung {self.marked}"
        elif self.status == COMPLETED:
            height += ", completed"
        return f"{self.label}: {height}; cost {cost_text(self.totals)}"


def cost_text(totals: dict | None) -> str:
    if not totals or not totals.get("runs"):
        return "no runs"
    text = (
        f"{usd(totals['usdMicros'])}, {count(totals['inputTokens'])} in / "
        f"{count(totals['outputTokens'])} out tokens, {duration(totals['wallMs'])}"
    )
    if totals["notReported"]:
        text += f" ({totals['notReported']} of {totals['runs']} runs not reported)"
    return text


def bars(record: DispatchRecord, sort: str = "height") -> list[Bar]:
    rungs = len(record.snapshot["rungs"])
    out = []
    for i, c in enumerate(record.climbers):
        stopped = c["status"] != COMPLETED and c["reached"] < rungs
        out.append(
            Bar(
                number=i + 1,
                key=c["key"],
                label=c["label"],
                status=c["status"],
                reached=c["reached"],
                marked=c["reached"] + 1 if stopped else None,
                totals=c["totals"],
            )
        )
    if sort == "height":
        out.sort(key=lambda b: (-b.reached, b.status != COMPLETED, b.number))
    elif sort == "cost":
        # Most expensive first; a climber with runs that reported nothing sorts by what did.
        out.sort(key=lambda b: (-(b.totals or {}).get("usdMicros", 0), b.number))
    return out


def _svg(width: int, height: int, title: str, desc: str, ident: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" id="{ident}">'
        f'<title id="{ident}-title">{escape(title)}</title>'
        f'<desc id="{ident}-desc">{escape(desc)}</desc>' + "".join(body) + "</svg>"
    )


def _axis(rungs: int, width: int, y_of) -> list[str]:
    """Horizontal lines at every rung (labelled at most a dozen times) and the axis title."""
    step = max(1, -(-rungs // 12))
    parts = []
    for r in range(rungs + 1):
        y = y_of(r)
        parts.append(
            f'<line class="grid-line" x1="{LEFT}" x2="{width - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        if r % step == 0:
            parts.append(
                f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{r}</text>'
            )
    parts.append(
        f'<text class="axis-title" x="12" y="{TOP + PLOT_HEIGHT / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {TOP + PLOT_HEIGHT / 2:.0f})">rung</text>'
    )
    return parts


def bar_chart(record: DispatchRecord, sort: str = "height", ident: str = "height-chart"):
    """One bar per climber to the rung it reached; the rung it stopped at is marked."""
    shown = bars(record, sort)
    rungs = max(1, len(record.snapshot["rungs"]))
    n = max(1, len(shown))
    column = max(6.0, min(96.0, 760 / n))
    named = n <= 12  # few enough bars to name under them
    width = int(LEFT + RIGHT + column * n)
    height = TOP + PLOT_HEIGHT + BOTTOM
    unit = PLOT_HEIGHT / rungs

    def y_of(r: float) -> float:
        return TOP + PLOT_HEIGHT - r * unit

    body = _axis(rungs, width, y_of)
    gap = 1.0 if column < 12 else column * 0.18
    for i, bar in enumerate(shown):
        x = LEFT + i * column + gap / 2
        w = column - gap
        parts = [f"<title>{escape(bar.text)}</title>"]
        if bar.reached:
            parts.append(
                f'<rect class="bar-passed" x="{x:.1f}" y="{y_of(bar.reached):.1f}" '
                f'width="{w:.1f}" height="{bar.reached * unit:.1f}"/>'
            )
        if bar.marked is not None:
            parts.append(
                f'<rect class="bar-{bar.mark}" x="{x:.1f}" y="{y_of(bar.marked):.1f}" '
                f'width="{w:.1f}" height="{unit:.1f}"/>'
            )
        if n <= 40:
            name = bar.label if named else str(bar.number)
            room = max(3, int(column / 6))
            name = name if len(name) <= room else name[: room - 1] + "…"
            parts.append(
                f'<text class="tick" x="{x + w / 2:.1f}" y="{TOP + PLOT_HEIGHT + 16}" '
                f'text-anchor="middle">{escape(name)}</text>'
            )
        body.append(
            f'<g class="bar" data-climber="{escape(bar.key)}" data-reached="{bar.reached}">'
            + "".join(parts)
            + "</g>"
        )
    completed = sum(b.status == COMPLETED for b in shown)
    top = max((b.reached for b in shown), default=0)
    desc = (
        f"{len(shown)} climbers over {len(record.snapshot['rungs'])} rungs: {completed} completed "
        f"every rung; the highest reached rung {top}. The table below lists each climber."
    )
    return mark_safe(_svg(width, height, "Height each climber reached", desc, ident, body)), shown  # noqa: S308 - escaped above


@dataclass
class Line:
    number: int
    key: str
    label: str
    heights: list[int | None]  # per record, oldest first; None where it did not climb
    colour: str


def lines(records: list[DispatchRecord]) -> list[Line]:
    """Each climber of the records, in first-seen order, with its height in every record."""
    order: dict[str, Line] = {}
    for j, record in enumerate(records):
        for c in record.climbers:
            line = order.get(c["key"])
            if line is None:
                n = len(order)
                line = order[c["key"]] = Line(
                    n + 1, c["key"], c["label"], [None] * len(records), PALETTE[n % len(PALETTE)]
                )
            line.heights[j] = c["reached"]
    return list(order.values())


def line_chart(
    records: list[DispatchRecord], ident: str = "height-lines"
) -> tuple[SafeString, list[Line]]:
    """Each climber's height across the records (oldest left), one line per climber."""
    shown = lines(records)
    rungs = max([1, *(len(r.snapshot["rungs"]) for r in records)])
    m = max(1, len(records))
    step_x = max(36.0, min(160.0, 760 / max(1, m - 1)))
    width = int(LEFT + RIGHT + step_x * max(1, m - 1) + 24)
    height = TOP + PLOT_HEIGHT + BOTTOM
    unit = PLOT_HEIGHT / rungs

    def x_of(j: int) -> float:
        return LEFT + 12 + j * step_x

    def y_of(r: float) -> float:
        return TOP + PLOT_HEIGHT - r * unit

    body = _axis(rungs, width, y_of)
    for j, record in enumerate(records):
        body.append(
            f'<text class="tick" x="{x_of(j):.1f}" y="{TOP + PLOT_HEIGHT + 16}" '
            f'text-anchor="middle">#{record.pk}</text>'
        )
    for line in shown:
        points = [(x_of(j), y_of(h)) for j, h in enumerate(line.heights) if h is not None]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        heights = ", ".join("–" if h is None else str(h) for h in line.heights)
        dots = "".join(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{line.colour}"/>' for x, y in points
        )
        body.append(
            f'<g class="line" data-climber="{escape(line.key)}">'
            f"<title>{escape(line.label)}: heights {heights}</title>"
            f'<polyline fill="none" stroke="{line.colour}" stroke-width="2" points="{path}"/>'
            f"{dots}</g>"
        )
    desc = (
        f"The height each of {len(shown)} climbers reached in the last {len(records)} "
        "records, oldest first. The table below lists the same heights."
    )
    return mark_safe(_svg(width, height, "Height across records", desc, ident, body)), shown  # noqa: S308 - escaped above
