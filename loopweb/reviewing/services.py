"""Reviewing's writes: pairwise judgements, a ladder's review settings, and the backlog's
crossings (each one transaction, or the caller's)."""

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from ladders.models import DispatchCell, Ladder
from loopweb.reviewing import backlog as backlog_news
from loopweb.reviewing import selectors
from loopweb.reviewing.models import PairwiseJudgement, ReviewSettings, pair_key
from loopweb.reviewing.ranking import CHOICES
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Run

NOT_A_RUNG = "Not a rung of this ladder's latest dispatch."


class Invalid(Exception):
    """Input that names what does not exist (a rung, a run of the rung, a pair of two
    climbers' runs): ``errors`` is ``{field: [message]}``."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(errors)
        self.errors = errors


@dataclass(frozen=True)
class PairInput:
    rung: str
    left: int
    right: int
    choice: str


def record_judgement(*, ladder: Ladder, reviewer, given: PairInput) -> PairwiseJudgement:
    """Record which of two runs of one rung the reviewer preferred. The runs must be two
    completed slot runs of that rung in the latest dispatch, by two different climbers; a
    reviewer judges a pair once (409 after)."""
    if given.choice not in CHOICES:
        raise Invalid({"choice": ["Must be left, right or tie."]})
    with transaction.atomic():
        slots = selectors.rung_runs(ladder, given.rung)
        if slots is None:
            raise Invalid({"rung": [NOT_A_RUNG]})
        dispatch_id, climber_of = slots
        errors: dict[str, list[str]] = {}
        for side in ("left", "right"):
            if getattr(given, side) not in climber_of:
                errors[side] = ["Not a completed run of this rung in the latest dispatch."]
        if not errors and climber_of[given.left] == climber_of[given.right]:
            errors["right"] = ["Must be a run of another climber than the left run's."]
        if errors:
            raise Invalid(errors)
        pair = pair_key(given.left, given.right)
        if PairwiseJudgement.objects.filter(
            ladder=ladder, rung_id=given.rung, reviewer=reviewer, pair=pair
        ).exists():
            raise Conflict("You have judged this pair already.", code="already_judged")
        try:
            with transaction.atomic():
                return PairwiseJudgement.objects.create(
                    ladder=ladder,
                    dispatch_id=dispatch_id,
                    rung_id=given.rung,
                    left=Run(pk=given.left),
                    right=Run(pk=given.right),
                    left_climber=climber_of[given.left],
                    right_climber=climber_of[given.right],
                    choice=given.choice,
                    reviewer=reviewer,
                    pair=pair,
                )
        except IntegrityError:  # the same pair judged by a concurrent request of the same reviewer
            raise Conflict("You have judged this pair already.", code="already_judged") from None


def save_settings(*, ladder: Ladder, backlog_threshold: int | None) -> ReviewSettings:
    """Set the backlog threshold (None: no backlog events). Where the backlog stands against the
    new threshold is counted at once: a backlog that now stands at or past it and did not
    before (no threshold, or a higher one it was under) is a crossing, and is announced."""
    with transaction.atomic():
        row, _ = ReviewSettings.objects.select_for_update().get_or_create(ladder=ladder)
        if row.backlog_threshold is None:
            row.backlog_over = False
        row.backlog_threshold = backlog_threshold
        if backlog_threshold is None:
            row.backlog_over = False
            row.save()
        else:
            _count(row, ladder, save=True)
        return row


def check_backlogs(*, cell_key: str) -> None:
    """Count the backlog of every ladder with a threshold whose latest dispatch reads this cell,
    and announce the ones that reached it (each ladder's settings row locked while it is
    counted, so two pushes at once announce one crossing). One query when none asked."""
    ladders = DispatchCell.objects.filter(cell_key=cell_key).values("dispatch__ladder_id")
    rows = list(
        ReviewSettings.objects.select_for_update()
        .filter(backlog_threshold__isnull=False, ladder_id__in=ladders)
        .order_by("ladder_id")
    )
    for row in rows:
        _count(row, Ladder.objects.select_related("owner").get(pk=row.ladder_id))


def _count(row: ReviewSettings, ladder: Ladder, *, save: bool = False) -> None:
    """Count the ladder's backlog against its threshold; announce a crossing; store where it
    stands when that changed."""
    waiting = selectors.backlog(ladder)
    threshold = row.backlog_threshold
    over = threshold is not None and waiting >= threshold
    if over and not row.backlog_over:
        backlog_news.announce(ladder, waiting=waiting, threshold=threshold)
    if over != row.backlog_over or save:
        row.backlog_over = over
        row.save()
