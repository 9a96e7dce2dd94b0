"""The review settings page's form: the ladder's rubric as rows (one criterion a row, and blank
rows to add one), the reviews each run wants, the assigned reviewers and the reservation time.
Checked by the API's own serializer (``ladders.inputs.ReviewSettingsMixin``), so the console and
the API accept and refuse the same settings with the same messages."""

from dataclasses import dataclass, field

from ladders.inputs import ReviewSettingsMixin
from loopweb.console.forms import _number
from loopweb.runs.errors import flatten

BLANK_ROWS = 2
MAX_ROWS = 20
TEXT = ("id", "label", "kind", "description", "min", "max", "step", "labels")


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


@dataclass
class SettingsForm:
    rows: list[dict] = field(default_factory=list)
    reviews_per_run: str = "1"
    reservation_minutes: str = "15"
    assigned: list[str] = field(default_factory=list)

    @classmethod
    def from_ladder(cls, ladder) -> "SettingsForm":
        rows = [
            {**{name: _text(c.get(name)) for name in TEXT}, "required": bool(c.get("required"))}
            for c in ladder.rubric
        ]
        return cls(
            rows=rows + [_blank() for _ in range(BLANK_ROWS)],
            reviews_per_run=str(ladder.reviews_per_run),
            reservation_minutes=str(ladder.reservation_minutes),
            assigned=[u.username for u in ladder.assignees.all()],
        )

    @classmethod
    def from_post(cls, post) -> "SettingsForm":
        count = min(_count(post.get("rows")), MAX_ROWS + BLANK_ROWS)
        rows = [
            {
                **{name: post.get(f"c{i}-{name}", "").strip() for name in TEXT},
                "required": post.get(f"c{i}-required") == "on",
            }
            for i in range(count)
        ]
        return cls(
            rows=rows,
            reviews_per_run=post.get("reviews-per-run", "").strip(),
            reservation_minutes=post.get("reservation-minutes", "").strip(),
            assigned=post.getlist("assigned"),
        )

    def filled(self) -> list[int]:
        """The rows that say something (a blank row adds nothing)."""
        return [i for i, row in enumerate(self.rows) if any(row[name] for name in TEXT[:2])]

    def validate(self) -> tuple[dict | None, dict[str, list[str]]]:
        """The settings as the API takes them, or the errors: a criterion's are keyed by its
        row (``c<row>.<field>``), the rest by the API's names."""
        filled = self.filled()
        rubric = [_criterion(self.rows[i]) for i in filled]
        body = ReviewSettingsMixin(
            data={
                "rubric": rubric,
                "reviewsPerRun": _number(self.reviews_per_run),
                "reservationMinutes": _number(self.reservation_minutes),
                "assignedReviewers": self.assigned,
            }
        )
        if body.is_valid():
            return body.validated_data, {}
        return None, self.row_errors(flatten(body.errors))

    def row_errors(self, errors: dict[str, list[str]]) -> dict[str, list[str]]:
        filled, found = self.filled(), {}
        for key, messages in errors.items():
            parts = key.split(".")
            if parts[0] == "rubric" and len(parts) > 1 and parts[1].isdigit():
                row = filled[int(parts[1])]
                key = f"c{row}.{parts[2] if len(parts) > 2 else 'id'}"
            found.setdefault(key, []).extend(messages)
        return found


def _blank() -> dict:
    return {**dict.fromkeys(TEXT, ""), "kind": "number", "required": False}


def _count(raw) -> int:
    try:
        return max(int(raw), 0)
    except (TypeError, ValueError):
        return 0


def _criterion(row: dict) -> dict:
    criterion: dict = {
        "id": row["id"],
        "kind": row["kind"],
        "label": row["label"],
        "description": row["description"],
        "required": row["required"],
    }
    if row["kind"] == "number":
        for name in ("min", "max", "step"):
            if row[name]:
                criterion[name] = _number(row[name])
    elif row["kind"] == "category":
        criterion["labels"] = [label.strip() for label in row["labels"].split(",") if label.strip()]
    return criterion
