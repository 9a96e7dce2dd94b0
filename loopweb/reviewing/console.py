"""The console's reviewing pages for a ladder: a blind pairwise session (keys A, B and T), its
results, agreement between reviewers, the runs they split on, and the backlog alert.
Server-rendered: every page works without scripts; the keys only press the buttons."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from ladders import progress
from ladders.access import NOT_CONTROLLED, controls
from loopweb.console import queries
from loopweb.console.access import signed_in, viewable_ladder
from loopweb.console.presenters import pin_text
from loopweb.console.review import run_summary
from loopweb.reviewing import selectors, services
from loopweb.reviewing.models import ReviewSettings
from loopweb.reviewing.ranking import CHOICES, win_probability
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Run
from loopweb.runs.numbers import typed_integer

CHOICE_WORDS = {"left": "A", "right": "B", "tie": "a tie"}


def _rungs(ladder) -> list[dict]:
    return [{**r, "label": f"Rung {r['number']} · {pin_text(r)}"} for r in _pins(ladder)]


def _pins(ladder) -> list[dict]:
    dispatch = progress.dispatch_of(ladder)
    if dispatch is None:
        return []
    return [
        {"id": r["id"], "number": n, **{k: r.get(k) for k in ("case", "version", "variant")}}
        for n, r in enumerate(dispatch.snapshot.get("rungs", []), start=1)
    ]


def _labels(ladder, keys) -> dict[str, str]:
    """The latest dispatch's labels of these climbers (a key it does not hold stands as is)."""
    keys = sorted(set(keys))
    dispatch = progress.dispatch_of(ladder)
    if dispatch is None or not keys:
        return {k: k for k in keys}
    return dict(zip(keys, queries.climber_labels(dispatch, keys), strict=True))


def _base(request, ladder, tab: str) -> dict:
    return {"ladder": ladder, "tab": tab, "may_judge": selectors.may_judge(request.user, ladder)}


def _session_url(ladder, rung: str | None) -> str:
    url = reverse("reviewing:pairwise", args=[ladder.pk])
    return f"{url}?{urlencode({'rung': rung})}" if rung else url


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def pairwise(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    rungs = _rungs(ladder)
    ids = [r["id"] for r in rungs]
    if request.method == "POST":
        return _judge(request, ladder, ids)
    rung = request.GET.get("rung") or (ids[0] if ids else None)
    if rung not in ids:
        rung = ids[0] if ids else None
    context = {**_base(request, ladder, "pairwise"), "rungs": rungs, "rung": rung, "pair": None}
    if rung and context["may_judge"]:
        pair = selectors.next_pair(ladder, request.user, rung)
        if pair is not None:
            runs = Run.objects.in_bulk([pair["left"], pair["right"]])
            context["pair"] = {
                "left": _shown(runs[pair["left"]]),
                "right": _shown(runs[pair["right"]]),
                "remaining": pair["remaining"],
            }
        context["judged"] = selectors.judgements(ladder, rung).filter(reviewer=request.user).count()
    return render(request, "reviewing/pairwise.html", context)


def _shown(run: Run) -> dict:
    """A run as the blind session shows it: its record's summary, and nothing naming who ran
    it (no climber, no combination, no commit)."""
    return {"run": run, "summary": run_summary(run, queries.checklist_of(run))}


def _judge(request, ladder, ids: list[str]):
    if not selectors.may_judge(request.user, ladder):
        raise PermissionDenied(selectors.NOT_REVIEWER)
    rung = request.POST.get("rung", "")
    left, right = (typed_integer(request.POST.get(side)) for side in ("left", "right"))
    choice = request.POST.get("choice", "")
    if rung not in ids or left is None or right is None or choice not in CHOICES:
        messages.error(request, "That judgement could not be read: pick A, B or a tie.")
        return redirect(_session_url(ladder, rung if rung in ids else None))
    try:
        services.record_judgement(
            ladder=ladder,
            reviewer=request.user,
            given=services.PairInput(rung=rung, left=left, right=right, choice=choice),
        )
    except services.Invalid as exc:
        messages.error(request, " ".join(m for ms in exc.errors.values() for m in ms))
    except Conflict as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(request, f"Recorded: {CHOICE_WORDS[choice]}.")
    return redirect(_session_url(ladder, rung))


@signed_in
@require_safe
def results(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    rungs = _rungs(ladder)
    sections = [
        {"title": "Every rung together", "id": "overall", **selectors.results(ladder)},
        *(
            {"title": r["label"], "id": r["id"], **selectors.results(ladder, r["id"])}
            for r in rungs
        ),
    ]
    keys = {row["climber"] for s in sections for row in s["ranking"]}
    labels = _labels(ladder, keys)
    for section in sections:
        _present(section, labels)
    return render(
        request,
        "reviewing/results.html",
        {**_base(request, ladder, "results"), "sections": sections},
    )


def _present(section: dict, labels: dict[str, str]) -> None:
    """Labels, the ranking's interval as a bar, and the preference table as a matrix."""
    ranking = section["ranking"]
    for row in ranking:
        row["label"] = labels.get(row["climber"], row["climber"])
    if not ranking:
        section["matrix"] = []
        return
    low = min(r["low"] for r in ranking)
    high = max(r["high"] for r in ranking)
    span = (high - low) or 1.0
    for row in ranking:
        row["bar_left"] = round(100 * (row["low"] - low) / span, 1)
        row["bar_width"] = max(round(100 * (row["high"] - row["low"]) / span, 1), 0.5)
        row["dot"] = round(100 * (row["score"] - low) / span, 1)
        row["versus_mean"] = round(100 * win_probability(row["score"], 0.0))
    table = {(p["climber"], p["opponent"]): p for p in section["preferences"]}
    order = [r["climber"] for r in ranking]
    section["columns"] = [labels.get(c, c) for c in order]
    section["matrix"] = [
        {
            "label": labels.get(a, a),
            "cells": [table.get((a, b)) if a != b else "self" for b in order],
        }
        for a in order
    ]


@signed_in
@require_safe
def agreement(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    row = ReviewSettings.objects.filter(ladder=ladder).first()
    return render(
        request,
        "reviewing/agreement.html",
        {
            **_base(request, ladder, "agreement"),
            "report": selectors.agreement_report(ladder),
            "control": controls(request.user, ladder),
            "threshold": row.backlog_threshold if row else None,
            "backlog": selectors.backlog(ladder),
        },
    )


@signed_in
@require_safe
def disagreements(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    rows = selectors.disagreements(ladder)
    numbers = {r["id"]: r["number"] for r in _pins(ladder)}
    labels = _labels(ladder, {r["climber"] for r in rows})
    for row in rows:
        row["number"] = numbers.get(row["rung"])
        row["label"] = labels.get(row["climber"], row["climber"])
    return render(
        request,
        "reviewing/disagreements.html",
        {**_base(request, ladder, "disagreements"), "rows": rows},
    )


@signed_in
@require_POST
def backlog_alert(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    if not controls(request.user, ladder):
        raise PermissionDenied(NOT_CONTROLLED)
    raw = request.POST.get("threshold", "").strip()
    value = typed_integer(raw, low=1, high=1_000_000) if raw else None
    back = reverse("reviewing:agreement", args=[ladder.pk]) + "#backlog"
    if raw and value is None:
        messages.error(request, "The threshold is a whole number of runs from 1 to 1,000,000.")
        return redirect(back)
    row = services.save_settings(ladder=ladder, backlog_threshold=value)
    if value is None:
        messages.success(request, "No backlog alert: review.backlog will not be sent.")
    else:
        messages.success(
            request,
            f"review.backlog will be sent when {value} run(s) wait for review"
            + (" (as many wait now: the alert is sent)." if row.backlog_over else "."),
        )
    return redirect(back)
