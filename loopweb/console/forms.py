"""The console's forms: parse what the browser posts into the API's shape, and validate it with
the API's own serializers, so the browser and the REST clients share one rule set.

The ladder editor is stateless: every button posts the whole form with an ``op`` (add a rung,
move one, remove one, ...), and the server answers with the edited form. Nothing is stored until
``op=save``, which validates with ``LadderConfigSerializer`` and calls ``save_ladder``.
"""

import re
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from ladders import gate as gate_defaults
from ladders.inputs import LadderConfigSerializer
from ladders.rung_checks import MAX_RUNGS
from loopweb.runs.errors import django_detail, flatten
from loopweb.runs.inputs import ReviewSerializer
from loopweb.runs.numbers import typed_integer

RUNG_FIELDS = ("id", "case", "version", "variant", "engine", "runs")
#: More rows than this in one post is not an editor talking; the serializer caps rungs at 50.
MAX_ROWS = MAX_RUNGS + 10
OP = re.compile(r"^(add|add-many|pick|save|remove|up|down|newest)(?:-(\d{1,3}))?$")


def _ids(values: list[str]) -> list:
    """Checkbox values as ints; anything else is passed on for the serializer to reject."""
    return [found if (found := typed_integer(v)) is not None else v for v in values]


DECIMAL = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def _number(raw: str):
    """A number typed into a form, as the JSON number the API takes; anything else (an integer
    of more digits than any field holds among it) is passed on as typed, for the serializer to
    refuse beside its field."""
    raw = raw.strip()
    sign, digits = (raw[0], raw[1:]) if raw[:1] in ("+", "-") else ("", raw)
    if (value := typed_integer(digits)) is not None:
        return -value if sign == "-" else value
    if DECIMAL.match(raw) and len(raw) <= 40:
        return float(raw)
    return raw


def optional_number(raw: str):
    """``_number``, with nothing typed read as none."""
    raw = raw.strip()
    return None if raw == "" else _number(raw)


@dataclass
class EditorState:
    """The editor's fields, kept as the user typed them so a re-rendered form shows them back."""

    name: str = ""
    rungs: list[dict] = field(default_factory=list)
    groups: list = field(default_factory=list)
    combinations: list = field(default_factory=list)
    floor: str = gate_defaults.DEFAULT_FLOOR
    threshold_kind: str = "count"
    threshold_count: str = str(gate_defaults.DEFAULT_THRESHOLD["count"])
    threshold_fraction: str = ""
    unloaded: bool = gate_defaults.DEFAULT_UNLOADED_COUNTS_AS_BROKEN
    early_stop: bool = gate_defaults.DEFAULT_EARLY_STOP
    runs_per_cell: str = "1"
    limit: str = ""
    retry_count: str = "1"
    outer_axis: str = "rung"
    reviewers: str = ""
    add_case: str = ""
    add_version: str = ""
    add_variant: str = "default"
    add_engine: str = ""
    add_many: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: dict) -> "EditorState":
        """From ``ladder_config_json``: the saved ladder as the API reads it."""
        gate = gate_defaults.completed(config["gate"])
        threshold = gate["threshold"]
        return cls(
            name=config["name"],
            rungs=[
                {
                    "id": r["id"],
                    "case": r["case"],
                    "version": r["version"],
                    "variant": r["variant"],
                    "engine": r["engine"] or "",
                    "runs": "" if r["runs"] is None else str(r["runs"]),
                }
                for r in config["rungs"]
            ],
            groups=list(config["groups"]),
            combinations=list(config["combinations"]),
            floor=gate["floor"],
            threshold_kind="fraction" if "fraction" in threshold else "count",
            threshold_count=str(threshold.get("count", "")),
            threshold_fraction=str(threshold.get("fraction", "")),
            unloaded=gate["unloadedCountsAsBroken"],
            early_stop=gate["earlyStop"],
            runs_per_cell=str(config["runsPerCell"]),
            limit="" if config["runsInFlightLimit"] is None else str(config["runsInFlightLimit"]),
            retry_count=str(config["retryCount"]),
            outer_axis=config["outerAxis"],
            reviewers=", ".join(config["reviewers"]),
        )

    @classmethod
    def from_post(cls, post) -> "EditorState":
        try:
            total = min(int(post.get("rungs-total", "0")), MAX_ROWS)
        except ValueError:
            total = 0
        rungs = []
        for i in range(max(total, 0)):
            rung = {f: post.get(f"rungs-{i}-{f}", "").strip() for f in RUNG_FIELDS}
            if rung["case"] or rung["version"]:
                rungs.append(rung)
        return cls(
            name=post.get("name", ""),
            rungs=rungs,
            groups=_ids(post.getlist("groups")),
            combinations=_ids(post.getlist("combinations")),
            floor=post.get("gate-floor", gate_defaults.DEFAULT_FLOOR),
            threshold_kind="fraction" if post.get("threshold-kind") == "fraction" else "count",
            threshold_count=post.get("threshold-count", "").strip(),
            threshold_fraction=post.get("threshold-fraction", "").strip(),
            unloaded="gate-unloaded" in post,
            early_stop="gate-early-stop" in post,
            runs_per_cell=post.get("runs-per-cell", "").strip(),
            limit=post.get("runs-in-flight-limit", "").strip(),
            retry_count=post.get("retry-count", "").strip(),
            outer_axis=post.get("outer-axis", "rung"),
            reviewers=post.get("reviewers", ""),
            add_case=post.get("add-case", "").strip(),
            add_version=post.get("add-version", "").strip(),
            add_variant=post.get("add-variant", "").strip() or "default",
            add_engine=post.get("add-engine", "").strip(),
            add_many=[slug.strip() for slug in post.getlist("add-many") if slug.strip()],
        )

    def to_api(self) -> dict:
        """The ladder as ``POST /api/ladders/`` takes it."""
        if self.threshold_kind == "fraction":
            threshold = {"fraction": _number(self.threshold_fraction)}
        else:
            threshold = {"count": _number(self.threshold_count)}
        return {
            "name": self.name,
            "rungs": [
                {
                    "id": r["id"] or None,
                    "case": r["case"],
                    "version": r["version"],
                    "variant": r["variant"] or "default",
                    "engine": r["engine"] or None,
                    "runs": optional_number(r["runs"]),
                }
                for r in self.rungs
            ],
            "groups": self.groups,
            "combinations": self.combinations,
            "gate": {
                "floor": self.floor,
                "threshold": threshold,
                "unloadedCountsAsBroken": self.unloaded,
                "earlyStop": self.early_stop,
            },
            "runsPerCell": _number(self.runs_per_cell),
            "runsInFlightLimit": optional_number(self.limit),
            "retryCount": _number(self.retry_count),
            "outerAxis": self.outer_axis,
            "reviewers": [n for n in re.split(r"[\s,]+", self.reviewers) if n],
        }

    # Editing ops: each returns (a sentence for the status line, errors, the id to focus).

    def apply(self, op: str, catalog) -> tuple[str, dict, str | None]:
        match = OP.match(op or "")
        if not match:
            return "", {}, None
        verb, index = match.group(1), match.group(2)
        if verb == "add":
            return self._add(catalog)
        if verb == "add-many":
            return self._add_many(catalog)
        if verb == "pick":
            return "", {}, None
        i = int(index) if index is not None else -1
        if not 0 <= i < len(self.rungs):
            return "", {}, None
        rung = self.rungs[i]
        pin = f"{rung['case']}@{rung['version']}"
        if verb == "remove":
            del self.rungs[i]
            focus = f"rungs-{min(i, len(self.rungs) - 1)}-runs" if self.rungs else "add-case"
            return f"Removed rung {i + 1} ({pin}). Save to keep the change.", {}, focus
        if verb in ("up", "down"):
            j = i - 1 if verb == "up" else i + 1
            if not 0 <= j < len(self.rungs):
                return "", {}, None
            self.rungs[i], self.rungs[j] = self.rungs[j], self.rungs[i]
            still = j > 0 if verb == "up" else j < len(self.rungs) - 1
            focus = f"rungs-{j}-{verb}" if still else f"rungs-{j}-runs"
            return f"Moved rung {pin} to position {j + 1}. Save to keep the order.", {}, focus
        newest = catalog.newest.get(rung["case"])
        if newest and newest != rung["version"]:
            # A new pin is a new rung: it gets a new id when saved.
            self.rungs[i] = {**rung, "id": "", "version": newest}
            return (
                f"Rung {i + 1} now pins {rung['case']}@{newest}. Save to keep the change.",
                {},
                f"rungs-{i}-runs",
            )
        return "", {}, None

    def _add_many(self, catalog) -> tuple[str, dict, str | None]:
        """Several cases at once, each at its newest version that can be a rung, in the order
        the catalog lists them: one round trip for what would take two per rung."""
        chosen = [catalog.cases[s] for s in catalog.cases if s in set(self.add_many)]
        pins = [(c.slug, catalog.rung_version(c.slug)) for c in chosen]
        missing = [slug for slug, version in pins if version is None]
        if not chosen:
            return "", {"add_many": ["Choose the cases to add."]}, "add-many"
        if missing:
            return "", {"add_many": [f"Not rungs: {', '.join(missing)}."]}, "add-many"
        if len(self.rungs) + len(pins) > MAX_RUNGS:
            return "", {"add_many": [f"A ladder holds at most {MAX_RUNGS} rungs."]}, "add-many"
        for slug, version in pins:
            self.rungs.append(
                {
                    "id": "",
                    "case": slug,
                    "version": version,
                    "variant": "default",
                    "engine": "",
                    "runs": "",
                }
            )
        self.add_many = []
        added = ", ".join(f"{slug}@{version}" for slug, version in pins)
        return f"Added {len(pins)} rungs ({added}). Save to keep the change.", {}, "add-many"

    def _add(self, catalog) -> tuple[str, dict, str | None]:
        errors = {}
        case = catalog.cases.get(self.add_case)
        if case is None:
            errors["add"] = ["Choose a case to add."]
        elif self.add_version not in catalog.versions_of(self.add_case):
            errors["add"] = [f"Choose a version of {self.add_case}."]
        elif len(self.rungs) >= MAX_RUNGS:
            errors["add"] = [f"A ladder holds at most {MAX_RUNGS} rungs."]
        if errors:
            return "", errors, "add-case"
        rung = {
            "id": "",
            "case": self.add_case,
            "version": self.add_version,
            "variant": self.add_variant or "default",
            "engine": self.add_engine,
            "runs": "",
        }
        self.rungs.append(rung)
        self.add_case = self.add_version = self.add_engine = ""
        self.add_variant = "default"
        text = f"{rung['case']}@{rung['version']}"
        return (
            f"Added rung {len(self.rungs)} ({text}). Save to keep the change.",
            {},
            "add-case",
        )


def validate_ladder(state: EditorState, request, owner) -> tuple[dict | None, dict[str, list[str]]]:
    """The editor's data checked by the API's serializer; errors keyed like the API's."""
    body = LadderConfigSerializer(data=state.to_api(), context={"request": request, "owner": owner})
    if body.is_valid():
        return body.validated_data, {}
    return None, flatten(body.errors)


def service_errors(exc: ValidationError) -> dict[str, list[str]]:
    return flatten(django_detail(exc))


@dataclass
class ReviewInput:
    aesthetic_rating: str = ""
    writeup: str = ""
    verdict: str = ""

    @classmethod
    def from_post(cls, post) -> "ReviewInput":
        return cls(
            aesthetic_rating=post.get("aesthetic-rating", ""),
            writeup=post.get("writeup", ""),
            verdict=post.get("verdict", ""),
        )

    def validate(self) -> tuple[dict | None, dict[str, list[str]]]:
        """Checked by the API's review serializer: rating 1-5, writeup, optional verdict."""
        body = ReviewSerializer(
            data={
                "aestheticRating": _number(self.aesthetic_rating),
                "writeup": self.writeup,
                "verdict": self.verdict,
            }
        )
        if body.is_valid():
            return body.validated_data, {}
        errors = flatten(body.errors)
        if "aestheticRating" in errors and not self.aesthetic_rating:
            errors["aestheticRating"] = ["Choose an aesthetic rating from 1 to 5."]
        return None, errors
