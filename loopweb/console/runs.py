"""Runs as the console shows them: one rung slot's runs and jobs (the board's side panel), and
one run's page.

A slot's runs are its cell's runs: the counted ones in the order they finished, the first
``target`` of them the slot's own and the rest beyond its target, then the runs that do not
count (infrastructure, cancelled, or an attempt that was retried). Every read here costs a fixed
number of queries, however many runs the slot holds.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.http import Http404

from ladders import shared_progress
from ladders.models import Ladder
from ladders.origins import origin
from loopweb import stats
from loopweb.console import queries
from loopweb.console.presenters import (
    climber_status_text,
    pin_text,
    shown_status,
    status_label,
    tally_items,
)
from loopweb.console.review import run_summary
from loopweb.console.waiting import slot_wait
from loopweb.runs.models import Job, Review, Run
from signals_app.acceptance import parse_rule
from signals_app.models import Signal
from signals_app.selectors import read_run
from signals_app.services import current_rule_of


@dataclass
class RunCard:
    run: Run
    place: str  # counted, beyond, uncounted
    summary: dict
    acceptance: dict | None
    acceptance_problem: str
    reviews: list = field(default_factory=list)

    @property
    def reviewed(self) -> bool:
        return bool(self.reviews)


def _acceptance(run: Run, signals: list[Signal], rules_by_owner: dict) -> tuple[dict | None, str]:
    """How the rule in effect reads the run: the run's stored rule, else its owner's current
    one (read once per owner)."""
    if run.acceptance_rule is not None:
        try:
            rule, source = parse_rule(run.acceptance_rule, check_recommended=False), "run"
        except ValidationError:
            return None, f"run {run.pk} stores an acceptance rule that cannot be read"
    else:
        owner = run.owner_id or (run.job.owner_id if run.job_id else None)
        if owner not in rules_by_owner:
            rules_by_owner[owner] = current_rule_of(owner)
        rule, source = rules_by_owner[owner], "owner"
    read = read_run(run, rule, signals)
    return {
        "result": read.result,
        "tier": read.tier,
        "rule": rule,
        "source": source,
        "parts": read.parts,
    }, ""


def run_cards(runs: list[tuple[Run, str]], checklist: list) -> list[RunCard]:
    """Cards for ``runs`` (each with its place in the slot): two queries, for their signals and
    their reviews, plus one per distinct owner whose current rule reads a run."""
    ids = [run.pk for run, _ in runs]
    signals, reviews = defaultdict(list), defaultdict(list)
    for signal in Signal.objects.filter(run_id__in=ids).order_by("id"):
        signals[signal.run_id].append(signal)
    for review in Review.objects.filter(run_id__in=ids).select_related("reviewer"):
        reviews[review.run_id].append(review)
    rules_by_owner: dict = {}
    cards = []
    for run, place in runs:
        acceptance, problem = _acceptance(run, signals[run.pk], rules_by_owner)
        cards.append(
            RunCard(
                run=run,
                place=place,
                summary=run_summary(run, checklist),
                acceptance=acceptance,
                acceptance_problem=problem,
                reviews=reviews[run.pk],
            )
        )
    return cards


def placed_runs(cell_key: str, target: int) -> list[tuple[Run, str]]:
    runs = Run.objects.filter(cell_key=cell_key).select_related("job").order_by("finished_at", "id")
    counted = [r for r in runs if r.counted]
    others = [r for r in runs if not r.counted]
    return (
        [(r, "counted") for r in counted[:target]]
        + [(r, "beyond") for r in counted[target:]]
        + [(r, "uncounted") for r in others]
    )


def slot_jobs(origin: str, cell_key: str) -> list[Job]:
    """The dispatch's own jobs for the slot, first launch first, each with its attempt."""
    jobs = Job.objects.filter(origin=origin, cell_key=cell_key).select_related("run")
    return list(jobs.order_by("created_at", "id"))


def slot_detail(ladder: Ladder, index: int, rung_id: str) -> dict:
    """What the board's side panel shows for climber ``index`` on rung ``rung_id``."""
    board = shared_progress.read(ladder)
    progress = board.body
    dispatch = progress["dispatch"]
    if dispatch is None or not 0 <= index < len(progress["climbers"]):
        raise Http404("No such rung slot.")
    climber = progress["climbers"][index]
    rungs = dispatch["rungs"]
    number = next((i + 1 for i, r in enumerate(rungs) if r["id"] == rung_id), None)
    slot = next((s for s in climber["slots"] if s["rung"] == rung_id), None)
    if number is None or slot is None:
        raise Http404("No such rung slot.")
    rung = rungs[number - 1]
    target = rung.get("target") or rung["runs"] or 1
    numbers = {r["id"]: i + 1 for i, r in enumerate(rungs)}
    live = progress["ladder"]["status"] in ("running", "needsAttention")
    cell_key = slot.get("cellKey")
    tally = climber["tally"] if rung_id == climber["currentRung"] else slot.get("tally")
    detail = {
        "ladder": ladder,
        "dispatch": dispatch,
        "index": index,
        "rung": rung,
        "rung_id": rung_id,
        "number": number,
        "pin": pin_text(rung),
        "title": queries.case_titles([rung["case"]]).get(rung["case"], rung["case"]),
        "target": target,
        "climber": climber,
        "climber_status": climber_status_text(climber, numbers, live),
        "climber_shown": shown_status(climber, live),
        "status": slot["status"],
        "dispatch_status": status_label(progress["ladder"]["status"]),
        "tally": tally_items(tally),
        "pass_rate": stats.pass_rate_text(stats.pass_rate_of(tally)) if tally else "",
        "cards": [],
        "jobs": [],
        "waiting": "",
    }
    if cell_key:
        checklist = queries.checklist_for(rung["case"], rung["version"])
        detail["cards"] = run_cards(placed_runs(cell_key, target), checklist)
        detail["jobs"] = slot_jobs(origin(ladder.pk, dispatch["id"], rung_id), cell_key)
        if live:
            detail["waiting"] = slot_wait(origin(ladder.pk, dispatch["id"], rung_id), cell_key)
    return detail


def attempt_chain(run: Run) -> list[Job]:
    """The attempts that led to the run's job, first attempt first: the job, the attempt it
    retried, and so on back (at most eleven, the retry limit plus one)."""
    if not run.job_id:
        return []
    job = run.job
    chain = [job]
    # retry_of is the reverse of "retry": an attempt's predecessor is the job it retried.
    ids = set()
    while job.attempt > 1 and len(chain) <= 11:
        previous = Job.objects.filter(retry=job).first()
        if previous is None or previous.pk in ids:
            break
        ids.add(previous.pk)
        chain.append(previous)
        job = previous
    return list(reversed(chain))


def acceptance_of(run_ids) -> dict[int, str]:
    """Each run's result under the rule in effect (success, failure or unknown): two queries,
    plus one per distinct owner whose current rule reads a run."""
    runs = list(Run.objects.filter(pk__in=list(run_ids)).select_related("job"))
    signals = defaultdict(list)
    for signal in Signal.objects.filter(run_id__in=[r.pk for r in runs]).order_by("id"):
        signals[signal.run_id].append(signal)
    rules_by_owner: dict = {}
    found = {}
    for run in runs:
        acceptance, _ = _acceptance(run, signals[run.pk], rules_by_owner)
        found[run.pk] = acceptance["result"] if acceptance else "unknown"
    return found
