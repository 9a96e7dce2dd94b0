"""Reviewing's reads: the runs of a rung, the next blind pair, the pairwise results, agreement
between reviewers and the runs they split on, and the backlog."""

import secrets
from collections import Counter, defaultdict

from ladders import access, progress
from ladders.gate import Gate
from ladders.models import Ladder
from ladders.selectors import review_queue, slot_run_entries
from loopweb.reviewing import agreement
from loopweb.reviewing.models import PairwiseJudgement, pair_key
from loopweb.reviewing.ranking import Judgement, bradley_terry, preference_table
from loopweb.runs.models import Review, Run
from loopweb.runs.outcomes import RATING_ORDER, rating_at_least

#: The validator's rating on the 1-5 scale of an aesthetic rating (broken 1 … flawless 5).
VALIDATOR_SCALE = {rating: rank + 1 for rank, rating in enumerate(RATING_ORDER)}
RATINGS = [1, 2, 3, 4, 5]
VERDICTS = ["accept", "reject"]
NOT_REVIEWER = "Only the ladder's owner and its reviewers judge its runs."


def may_judge(user, ladder: Ladder) -> bool:
    """SPEC §1: the ladder's owner and the reviewers it is shared with review its runs."""
    return ladder.owner_id == user.pk or ladder.reviewers.filter(pk=user.pk).exists()


def backlog(ladder: Ladder) -> int:
    """How many of the latest dispatch's completed runs wait for review (the review queue)."""
    return len(review_queue(ladder))


def rungs(ladder: Ladder) -> list[dict]:
    """The latest dispatch's rungs, in order: ``{"id", "number", "case", "version"}``."""
    dispatch = progress.dispatch_of(ladder)
    if dispatch is None:
        return []
    return [
        {"id": r["id"], "number": n, "case": r.get("case"), "version": r.get("version")}
        for n, r in enumerate(dispatch.snapshot.get("rungs", []), start=1)
    ]


def rung_runs(ladder: Ladder, rung_id: str) -> tuple[str, dict[int, str]] | None:
    """The latest dispatch's id and its completed runs of the rung, each with its climber's
    key; None when the rung is not one of that dispatch's."""
    dispatch = progress.dispatch_of(ladder)
    if dispatch is None or rung_id not in {r["id"] for r in dispatch.snapshot.get("rungs", [])}:
        return None
    entries = slot_run_entries(ladder)
    return dispatch.dispatch_id, {e["run"]: e["climber"] for e in entries if e["rung"] == rung_id}


def next_pair(ladder: Ladder, reviewer, rung_id: str) -> dict | None:
    """A pair of this rung's runs by two different climbers that the reviewer has not judged:
    from the two climbers compared least on the rung so far (by anyone), the sides drawn at
    random. ``{"left", "right", "remaining"}`` (run ids; how many pairs the reviewer has
    left), or None when none is left."""
    found = rung_runs(ladder, rung_id)
    if found is None:
        return None
    _, climber_of = found
    by_climber: dict[str, list[int]] = defaultdict(list)
    for run_id, key in sorted(climber_of.items()):
        by_climber[key].append(run_id)
    judged = set(
        PairwiseJudgement.objects.filter(
            ladder=ladder, rung_id=rung_id, reviewer=reviewer
        ).values_list("pair", flat=True)
    )
    met = Counter(
        frozenset(pair)
        for pair in PairwiseJudgement.objects.filter(ladder=ladder, rung_id=rung_id).values_list(
            "left_climber", "right_climber"
        )
    )
    climbers = sorted(by_climber)
    open_pairs: dict[frozenset, list[tuple[int, int]]] = {}
    for i, a in enumerate(climbers):
        for b in climbers[i + 1 :]:
            pairs = [
                (x, y) for x in by_climber[a] for y in by_climber[b] if pair_key(x, y) not in judged
            ]
            if pairs:
                open_pairs[frozenset((a, b))] = pairs
    if not open_pairs:
        return None
    fewest = min(met[c] for c in open_pairs)
    candidates = [c for c in open_pairs if met[c] == fewest]
    chosen = candidates[secrets.randbelow(len(candidates))]
    x, y = open_pairs[chosen][secrets.randbelow(len(open_pairs[chosen]))]
    left, right = (x, y) if secrets.randbelow(2) == 0 else (y, x)
    return {"left": left, "right": right, "remaining": sum(len(p) for p in open_pairs.values())}


def judgements(ladder: Ladder, rung_id: str | None = None):
    rows = PairwiseJudgement.objects.filter(ladder=ladder).select_related("reviewer")
    return rows.filter(rung_id=rung_id) if rung_id else rows


def judgement_json(j: PairwiseJudgement) -> dict:
    return {
        "id": j.pk,
        "rung": j.rung_id,
        "dispatch": j.dispatch_id,
        "left": j.left_id,
        "right": j.right_id,
        "leftClimber": j.left_climber,
        "rightClimber": j.right_climber,
        "choice": j.choice,
        "reviewer": j.reviewer.get_username(),
        "createdAt": j.created_at,
    }


def results(ladder: Ladder, rung_id: str | None = None) -> dict:
    """The pairwise results of one rung (or, without one, of every rung together): the
    preference table and the Bradley–Terry ranking with 95 % intervals."""
    rows = list(judgements(ladder, rung_id).values_list("left_climber", "right_climber", "choice"))
    read = [
        Judgement(a, b, None if choice == "tie" else (a if choice == "left" else b))
        for a, b, choice in rows
    ]
    table = preference_table(read)
    return {
        "rung": rung_id,
        "judgements": len(read),
        "preferences": [
            {"climber": a, "opponent": b, **counts}
            for (a, b), counts in sorted(table.items(), key=lambda item: item[0])
        ],
        "ranking": [
            {
                "climber": s.climber,
                "rank": s.rank,
                "score": round(s.score, 4),
                "low": round(s.low, 4),
                "high": round(s.high, 4),
                "stderr": round(s.stderr, 4),
                "wins": s.wins,
                "comparisons": s.comparisons,
            }
            for s in bradley_terry(read)
        ],
    }


# Agreement -----------------------------------------------------------------------------------


def _reviews(ladder: Ladder) -> tuple[list[dict], dict[int, list[Review]]]:
    """The latest dispatch's completed slot runs, and each one's reviews by the ladder's owner
    and reviewers (two queries beyond the entries)."""
    entries = slot_run_entries(ladder)
    by_run: dict[int, list[Review]] = defaultdict(list)
    for review in (
        Review.objects.filter(access.by_readers(ladder), run_id__in=[e["run"] for e in entries])
        .select_related("reviewer")
        .order_by("run_id", "reviewer__username")
    ):
        by_run[review.run_id].append(review)
    return entries, by_run


def _pair_stats(pairs_v: list, pairs_r: list) -> dict:
    return {
        "verdict": {
            "shared": len(pairs_v),
            "agreement": _round(agreement.percent_agreement(pairs_v)),
            "kappa": _round(agreement.cohen_kappa(pairs_v, categories=VERDICTS)),
        },
        "rating": {
            "shared": len(pairs_r),
            "agreement": _round(agreement.percent_agreement(pairs_r)),
            "kappa": _round(
                agreement.cohen_kappa(pairs_r, categories=RATINGS, weights="quadratic")
            ),
        },
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def agreement_report(ladder: Ladder) -> dict:
    """Cohen's κ for each pair of reviewers over the runs both reviewed (verdicts, nominal;
    ratings, quadratically weighted), Krippendorff's α over every review (verdicts nominal,
    ratings ordinal), and each reviewer against the validators."""
    entries, by_run = _reviews(ladder)
    names = sorted({r.reviewer.get_username() for reviews in by_run.values() for r in reviews})
    ratings: dict[int, dict[str, int]] = {}
    verdicts: dict[int, dict[str, str]] = {}
    for run_id, reviews in by_run.items():
        ratings[run_id] = {r.reviewer.get_username(): r.aesthetic_rating for r in reviews}
        verdicts[run_id] = {r.reviewer.get_username(): r.verdict for r in reviews if r.verdict}
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pv = [(v[a], v[b]) for v in verdicts.values() if a in v and b in v]
            pr = [(r[a], r[b]) for r in ratings.values() if a in r and b in r]
            if pr:
                pairs.append({"reviewers": [a, b], **_pair_stats(pv, pr)})
    verdict_codes = {"accept": 1.0, "reject": 0.0}
    alpha = {
        "verdict": {
            "level": "nominal",
            "value": _round(
                agreement.krippendorff_alpha(
                    {u: {k: verdict_codes[v] for k, v in vs.items()} for u, vs in verdicts.items()},
                    level="nominal",
                )
            ),
            "units": sum(1 for vs in verdicts.values() if len(vs) >= 2),
        },
        "rating": {
            "level": "ordinal",
            "value": _round(agreement.krippendorff_alpha(ratings, level="ordinal")),
            "units": sum(1 for rs in ratings.values() if len(rs) >= 2),
        },
    }
    return {
        "runs": len(entries),
        "reviewedRuns": len(by_run),
        "reviewers": names,
        "pairs": pairs,
        "alpha": alpha,
        "validators": _against_validators(ladder, by_run, names),
    }


def _against_validators(ladder: Ladder, by_run: dict[int, list[Review]], names: list[str]):
    """Each reviewer against the validators: a verdict against the gate's reading of the
    validator rating (accept when it is at or above the gate's floor), and the aesthetic
    rating against the validator rating on the same 1-5 scale (broken 1 … flawless 5)."""
    floor = Gate.from_json(ladder.gate or {}).floor
    rated = dict(
        Run.objects.filter(pk__in=list(by_run), validator_rating__isnull=False).values_list(
            "id", "validator_rating"
        )
    )
    rows = []
    for name in names:
        pv, pr = [], []
        for run_id, reviews in by_run.items():
            validator = rated.get(run_id)
            if validator is None:
                continue
            for r in reviews:
                if r.reviewer.get_username() != name:
                    continue
                pr.append((r.aesthetic_rating, VALIDATOR_SCALE[validator]))
                if r.verdict:
                    gate = "accept" if rating_at_least(validator, floor) else "reject"
                    pv.append((r.verdict, gate))
        if pr:
            rows.append({"reviewer": name, **_pair_stats(pv, pr)})
    return rows


def disagreements(ladder: Ladder) -> list[dict]:
    """The runs whose reviewers split (a verdict of accept against one of reject, or ratings
    more than one step apart), in ladder order, for the owner to adjudicate."""
    entries, by_run = _reviews(ladder)
    found = []
    for entry in entries:
        reviews = by_run.get(entry["run"], [])
        if len(reviews) < 2:
            continue
        reasons = agreement.split(
            [r.aesthetic_rating for r in reviews], [r.verdict for r in reviews]
        )
        if reasons:
            found.append(
                {
                    **entry,
                    "reasons": reasons,
                    "reviews": [
                        {
                            "reviewer": r.reviewer.get_username(),
                            "aestheticRating": r.aesthetic_rating,
                            "verdict": r.verdict or None,
                        }
                        for r in reviews
                    ],
                }
            )
    return found
