"""The board's grid rows, rendered as HTML strings.

A large board is ten thousand rung slots: a template would take the better part of a second to
render them. Each row is built here from its climber's progress, and kept with the climber's
part of the shared board (``Part.memo``), so a refresh after one push renders the one row whose
climber changed.
"""

from functools import lru_cache

from django.utils.html import escape

from ladders.statuses import BLOCKED, RUNNING
from loopweb import stats
from loopweb.console.presenters import SLOT_SYMBOLS, climber_status_text, shown_status, tally_items


def _tip(cell_id: str, number: int, status: str, current: bool, tally: dict) -> str:
    body = _tip_body(number, status, current, tuple(tally.items()))
    return f'<div class="tip" role="tooltip" id="{cell_id}-tip">{body}</div>'


@lru_cache(maxsize=4096)
def _tip_body(number: int, status: str, current: bool, tally: tuple[tuple[str, int], ...]) -> str:
    """A slot's tooltip inside its element: the same for every slot of a rung with the same
    status and tally (most slots of a decided board), so made once for them."""
    items = "".join(
        f"<div><dt>{term}</dt><dd>{value}</dd></div>" for term, value in tally_items(dict(tally))
    )
    title = f"Rung {number} · {status}" + (" · current rung" if current else "")
    rate = stats.pass_rate_text(stats.pass_rate_of(dict(tally)))
    return f'<p class="tip-title">{title}</p><p class="tip-rate">{rate}</p><dl>{items}</dl>'


def row_html(index: int, climber: dict, numbers: dict[str, int], *, live: bool, oob=False) -> str:
    """One climber's row: its label and status, then a cell per rung slot."""
    slots = climber["slots"]
    columns = len(slots)
    cells = []
    for ri, slot in enumerate(slots):
        status = slot["status"]
        reading = slot["rung"] == climber["currentRung"]
        tally = climber["tally"] if reading else slot.get("tally")
        current = reading and status in (RUNNING, BLOCKED)
        # A running slot with nothing under way waits for room: it is not drawn as running.
        waiting = live and status == RUNNING and bool(tally) and tally["inFlight"] == 0
        shown = "running, waiting for room" if waiting else status
        cell_id = f"slot-{index}-{ri}"
        classes = f"slot slot-{status}"
        if waiting:
            classes += " slot-waiting"
        if current:
            classes += " is-current"
        if columns - ri <= 2 and ri >= 2:
            classes += " tip-left"
        label = f'<span class="visually-hidden">Rung {ri + 1}: {shown}</span>'
        mark = "…" if waiting else SLOT_SYMBOLS.get(status, "?")
        symbol = f'<span class="slot-symbol" aria-hidden="true">{mark}</span>'
        if tally:
            cells.append(
                f'<td id="{cell_id}" class="{classes}" data-status="{status}" tabindex="0"'
                f' aria-describedby="{cell_id}-tip">{symbol}{label}'
                f"{_tip(cell_id, ri + 1, shown, current, tally)}</td>"
            )
        else:
            cells.append(
                f'<td id="{cell_id}" class="{classes}" data-status="{status}" tabindex="0">'
                f"{symbol}{label}</td>"
            )
    shown = shown_status(climber, live)
    text = escape(climber_status_text(climber, numbers, live))
    swap = ' hx-swap-oob="true"' if oob else ""
    return (
        f'<tr id="climber-row-{index}" data-climber="{escape(climber["key"])}"{swap}>'
        f'<th scope="row" class="climber"><span class="climber-label">'
        f"{escape(climber['label'])}</span>"
        f'<span class="climber-status cs-{shown}" data-climber-status="{shown}">{text}</span>'
        f"</th>{''.join(cells)}</tr>"
    )


def rows_html(parts, numbers: dict[str, int], *, live: bool, only=None, oob=False) -> str:
    """The rows of the board's climbers (or of the indexes ``only``), each rendered once per
    change of its climber and kept with its part."""
    indexes = range(len(parts)) if only is None else only
    rows = []
    for index in indexes:
        part = parts[index]
        key = ("row", index, live, oob)
        html = part.memo.get(key)
        if html is None:
            html = part.memo[key] = row_html(index, part.body, numbers, live=live, oob=oob)
        rows.append(html)
    return "".join(rows)
