"""The acceptance rule as a form, and a preview of how a rule reads its owner's latest runs."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Q

from loopweb.console.forms import optional_number
from loopweb.runs.models import Run
from signals_app.models import Signal
from signals_app.selectors import read_run

#: How many of the owner's latest runs the preview reads.
PREVIEW_RUNS = 20


def _names(raw: str) -> list[str]:
    return [name.strip() for name in raw.replace("\n", ",").split(",") if name.strip()]


@dataclass
class RuleInput:
    name: str = ""
    description: str = ""
    requires: str = ""
    excludes_events: str = ""
    window_days: str = ""
    score_name: str = ""
    score_target: str = ""
    score_better: str = "higher"
    score_scale: str = ""

    @classmethod
    def from_rule(cls, rule: dict) -> "RuleInput":
        score = rule.get("score") or {}
        return cls(
            name=rule["name"],
            description=rule["description"],
            requires=", ".join(rule["requires"]),
            excludes_events=", ".join(rule["excludes_events"]),
            window_days=str(rule["window_days"]),
            score_name=score.get("name") or "",
            score_target="" if score.get("target") is None else f"{score['target']:g}",
            score_better=score.get("better") or "higher",
            score_scale=score.get("scale") or "",
        )

    @classmethod
    def from_post(cls, post) -> "RuleInput":
        return cls(**{f: post.get(f.replace("_", "-"), "") for f in cls.__dataclass_fields__})

    def body(self) -> dict:
        """The API's request body for this form (``PUT /api/account/acceptance-rule``)."""
        body = {
            "name": self.name,
            "description": self.description,
            "requires": _names(self.requires),
            "excludes_events": _names(self.excludes_events),
            "window_days": optional_number(self.window_days),
            "score": None,
        }
        if self.score_name.strip():
            body["score"] = {
                "name": self.score_name.strip(),
                "target": optional_number(self.score_target),
                "better": self.score_better,
            }
            if self.score_scale:
                body["score"]["scale"] = self.score_scale
        return body


def latest_runs(user) -> list[Run]:
    """The user's latest runs: those they pushed as owner or whose job they launched."""
    runs = Run.objects.filter(Q(owner=user) | Q(job__owner=user)).select_related("combination")
    return list(runs.order_by("-finished_at", "-id")[:PREVIEW_RUNS])


def preview(user, rule: dict) -> dict:
    """How ``rule`` reads the user's latest runs: each run's result and tier, and the totals.
    Two queries (the runs, their signals)."""
    runs = latest_runs(user)
    signals = defaultdict(list)
    for signal in Signal.objects.filter(run__in=[r.pk for r in runs]).order_by("id"):
        signals[signal.run_id].append(signal)
    rows, totals = [], {"success": 0, "failure": 0, "unknown": 0}
    for run in runs:
        read = read_run(run, rule, signals[run.pk])
        totals[read.result] = totals.get(read.result, 0) + 1
        rows.append({"run": run, "result": read.result, "tier": read.tier, "parts": read.parts})
    return {"rows": rows, "totals": totals, "rule": rule}
