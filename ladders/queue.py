"""A ladder's review queue as each reader works it: the rubric its reviews answer, the reviews a
run wants (``reviews_per_run``), the reviewers assigned to it, and the reservation that keeps a
run opened by one reviewer from being handed to another.

- The owner's queue (and staff's) keeps the seed's meaning: the completed slot runs the owner
  has not reviewed that still want a review (with one review per run, those nobody on the
  ladder has reviewed).
- An assigned reviewer's queue: the runs they have not reviewed with a review still free for
  them — the run's reviews by the ladder's people and the live reservations of others leave
  room, or they hold its reservation. Without assignees every reviewer is assigned.
- Anyone else's queue is empty.

Reserving and reviewing from the queue lock the run's row, so two reviewers working one queue
at once never take a run beyond its number of reviews.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from ladders import access, rubric
from ladders.models import Ladder, ReviewReservation
from ladders.selectors import slot_run_entries
from loopweb.runs import services
from loopweb.runs.errors import Conflict, listed
from loopweb.runs.models import Review, Run

OWNER, ASSIGNED, NOBODY = "owner", "assigned", "nobody"
NOT_ASSIGNED = "You are not assigned to this ladder's review queue."


def role_of(ladder: Ladder, user) -> str:
    """How the user works the ladder's queue: as its owner (staff too), as an assigned
    reviewer, or not at all."""
    if user.pk == ladder.owner_id or user.is_staff:
        return OWNER
    assigned = {u.pk for u in ladder.assignees.all()}
    if user.pk in (assigned or {u.pk for u in ladder.reviewers.all()}):
        return ASSIGNED
    return NOBODY


@dataclass
class Taken:
    """Who has taken a run: its reviews by the ladder's people, and its live reservations."""

    reviewers: set[int]
    reserved: dict[int, datetime]  # reviewer → until

    def room_for(self, user_id: int, wanted: int) -> bool:
        """Whether the run has a review free for this user (or they hold its reservation)."""
        if user_id in self.reviewers:
            return False
        if user_id in self.reserved:
            return True
        others = [r for r in self.reserved if r not in self.reviewers]
        return len(self.reviewers) + len(others) < wanted


def taken(ladder: Ladder, run_ids: list[int]) -> dict[int, Taken]:
    """Two queries for any number of runs."""
    found = {run_id: Taken(set(), {}) for run_id in run_ids}
    for run_id, reviewer_id in Review.objects.filter(
        access.by_readers(ladder), run_id__in=run_ids
    ).values_list("run_id", "reviewer_id"):
        found[run_id].reviewers.add(reviewer_id)
    for run_id, reviewer_id, until in ReviewReservation.objects.filter(
        ladder=ladder, run_id__in=run_ids, expires_at__gt=timezone.now()
    ).values_list("run_id", "reviewer_id", "expires_at"):
        found[run_id].reserved[reviewer_id] = until
    return found


def queue_for(ladder: Ladder, user) -> list[dict]:
    """GET /ladders/{id}/queue for this reader: the entries of ``slot_run_entries``, each with
    ``reviews`` (its reviews by the ladder's owner and reviewers) and ``reservedUntil`` (when
    the reader's own reservation of it ends, or null)."""
    role = role_of(ladder, user)
    if role == NOBODY:
        return []
    entries = slot_run_entries(ladder)
    state = taken(ladder, [e["run"] for e in entries])
    wanted = ladder.reviews_per_run
    kept = []
    for entry in entries:
        run = state[entry["run"]]
        if role == OWNER:
            keep = user.pk not in run.reviewers and len(run.reviewers) < wanted
        else:
            keep = run.room_for(user.pk, wanted)
        if keep:
            kept.append(
                {**entry, "reviews": len(run.reviewers), "reservedUntil": run.reserved.get(user.pk)}
            )
    return kept


def _check_queue_run(ladder: Ladder, user, run_id: int, *, listed_already: bool) -> None:
    if role_of(ladder, user) == NOBODY:
        raise PermissionDenied(NOT_ASSIGNED)
    if not listed_already and run_id not in {e["run"] for e in slot_run_entries(ladder)}:
        raise Http404(f"Run {run_id} is not among the completed runs of the ladder's dispatch.")


def _locked(ladder: Ladder, user, run_id: int) -> tuple[Run, Taken]:
    """The run's row locked (reserving and reviewing it from any queue wait for each other),
    and who has taken it, read under the lock."""
    run = Run.objects.select_for_update(no_key=True).get(pk=run_id)
    return run, taken(ladder, [run_id])[run_id]


def _full(run_id: int, state: Taken, wanted: int, user_id: int) -> Conflict:
    if user_id in state.reviewers:
        return Conflict(f"you have already reviewed run {run_id}")
    holders = [r for r in state.reserved if r not in state.reviewers and r != user_id]
    if holders:
        names = User.objects.filter(pk__in=holders).order_by("username")
        until = max(state.reserved[r] for r in holders)
        return Conflict(
            f"run {run_id} has its {wanted} review{'s' if wanted != 1 else ''} taken: kept for "
            f"{listed(u.username for u in names)} until {until.isoformat(timespec='seconds')}"
        )
    return Conflict(f"run {run_id} has its {wanted} review{'s' if wanted != 1 else ''}")


def reserve(ladder: Ladder, user, run_id: int, *, listed_already: bool = False):
    """Keep the run for the user for the ladder's reservation time (a renewed reservation
    starts again); the user's other reservations on the ladder end (one run open at a time).
    409 when the run has no review free for them."""
    _check_queue_run(ladder, user, run_id, listed_already=listed_already)
    with transaction.atomic():
        run, state = _locked(ladder, user, run_id)
        if not state.room_for(user.pk, ladder.reviews_per_run):
            raise _full(run.pk, state, ladder.reviews_per_run, user.pk)
        ReviewReservation.objects.filter(ladder=ladder, reviewer=user).exclude(run=run).delete()
        until = timezone.now() + timedelta(minutes=ladder.reservation_minutes)
        reservation, _ = ReviewReservation.objects.update_or_create(
            ladder=ladder, run=run, reviewer=user, defaults={"expires_at": until}
        )
    return reservation


def release(ladder: Ladder, user, run_id: int) -> None:
    with transaction.atomic():
        ReviewReservation.objects.filter(ladder=ladder, reviewer=user, run_id=run_id).delete()


def checked_values(ladder: Ladder, values: dict[str, Any] | None) -> dict[str, Any]:
    """The values as stored, or a 400 naming each criterion they fail (``values.<id>``)."""
    values = values or {}
    problems = rubric.values_problems(ladder.rubric, values)
    if problems:
        # The rubric is the ladder's stored state: code "rubric", as a reference is checked.
        raise ValidationError(
            {key: [ValidationError(text, code="rubric")] for key, text in problems.items()}
        )
    return rubric.clean_values(ladder.rubric, values)


def review(
    ladder: Ladder, user, run_id: int, data: dict[str, Any], *, listed_already: bool = False
) -> Review:
    """A review taken from the ladder's queue: its values answer the ladder's rubric, and the
    run must have a review free for the user (its reviews and others' live reservations below
    the ladder's number, or the user's own reservation); the user's reservation ends with it."""
    values = checked_values(ladder, data.get("values"))
    _check_queue_run(ladder, user, run_id, listed_already=listed_already)
    with transaction.atomic():
        run, state = _locked(ladder, user, run_id)
        if not state.room_for(user.pk, ladder.reviews_per_run):
            raise _full(run.pk, state, ladder.reviews_per_run, user.pk)
        saved = services.review_run(
            run=run,
            reviewer=user,
            aesthetic_rating=data["aesthetic_rating"],
            writeup=data.get("writeup", ""),
            verdict=data.get("verdict") or "",
            values=values,
        )
        ReviewReservation.objects.filter(ladder=ladder, run=run, reviewer=user).delete()
    return saved


def correct(ladder: Ladder, user, run: Run, data: dict[str, Any]) -> Review:
    """A reviewer corrects their own review from the ladder's queue, values included."""
    values = checked_values(ladder, data.get("values"))
    return services.edit_review(
        run=run,
        reviewer=user,
        aesthetic_rating=data["aesthetic_rating"],
        writeup=data.get("writeup", ""),
        verdict=data.get("verdict") or "",
        values=values,
    )
