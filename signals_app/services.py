"""Writes of signals and acceptance rules. Each public function called by a view is one
transaction; ``record_push`` and ``snapshot_rule`` are called by the substrate's push hooks and
run inside the push's transaction, so a refused signal rolls the push back.

Signals are append-only. Appending to a run holds a lock on the run's row, so the two checks
that read what is already there (a signal id is unique in its run; a name keeps the kind of its
first signal) cannot be raced by a concurrent append. Several runs are locked in id order.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from loopweb.runs import checks
from loopweb.runs.access import is_driver
from loopweb.runs.models import Review, Run
from signals_app import acceptance, rules, signal_checks
from signals_app.models import AcceptanceRule, Signal, Source
from signals_app.rules import E195, Errors, SignalData


@dataclass(frozen=True)
class Appended:
    """The signals a request named, as stored, and how many of them are new."""

    signals: list[Signal]
    created: int


def _lock_runs(run_ids: Iterable[int]) -> list[Run]:
    # Lock the runs: two appends to one run could otherwise both pass the id and kind checks.
    return list(
        Run.objects.filter(pk__in=list(run_ids)).order_by("pk").select_for_update(no_key=True)
    )


def _lock_run(run: Run) -> Run:
    """The run, locked and read afresh (its stored rule may have changed since it was read)."""
    locked = _lock_runs([run.pk])
    if not locked:
        raise Run.DoesNotExist(f"run {run.pk} is gone")
    return locked[0]


def _names_on(run: Run, names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each of ``names`` already on the run: its kind (one per name, by the E195 rule) and the
    id of its first signal."""
    found: dict[str, tuple[str, str]] = {}
    rows = (
        Signal.objects.filter(run=run, name__in=set(names))
        .order_by("pk")
        .values_list("name", "kind", "signal_id")
    )
    for name, kind, signal_id in rows:
        found.setdefault(name, (kind, signal_id))
    return found


def _append(
    run: Run,
    entries: Sequence[tuple[str, SignalData]],
    errors: Errors,
    *,
    source: str,
    recorded_by: User | None = None,
    kind_field: str = "kind",
    id_field: str = "id",
    run_label: str = "this run",
    on_run: list[Signal] | None = None,
    declared: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[list[Signal], list[Signal]]:
    """Check entries against a locked run; return (every named signal, the new unsaved ones).

    A signal whose id is already on the run with the same content is the same signal sent again
    and is not added twice; the same id with other content is refused. ``on_run``, when given,
    is every signal on the run, and the database is not read. ``declared`` is what the run's
    stored acceptance rule says of its names (``acceptance.rule_kinds``); a new signal must agree.
    """
    if on_run is None:
        ids, names = {d.id for _, d in entries}, {d.name for _, d in entries}
        existing = {s.signal_id: s for s in Signal.objects.filter(run=run, signal_id__in=ids)}
        kinds = {name: kind for name, (kind, _) in _names_on(run, names).items()}
    else:
        existing = {s.signal_id: s for s in on_run}
        kinds = {}
        for signal in on_run:
            kinds.setdefault(signal.name, signal.kind)
    named: list[Signal] = []
    new: list[tuple[str, SignalData]] = []
    fresh: dict[str, Signal] = {}
    for path, data in entries:
        stored = existing.get(data.id) or fresh.get(data.id)
        if stored is not None:
            if stored.as_data().same_as(data):
                named.append(stored)
            else:
                errors.add(
                    checks.join(path, id_field),
                    f"A different signal with id {data.id!r} is already on {run_label}.",
                    "unique",
                )
            continue
        signal = Signal.from_data(data, run=run, source=source, recorded_by=recorded_by)
        fresh[data.id] = signal
        named.append(signal)
        new.append((path, data))
    signal_checks.check_name_kinds(
        new, kinds, errors, field=kind_field, run_label=run_label, declared=declared
    )
    return named, list(fresh.values())


def add_signals(*, run: Run, body: Any, recorded_by: User) -> Appended:
    """Append a signal or a list of signals to a run: all of them or none."""
    entries = signal_checks.parse_signal_body(body)
    with transaction.atomic(durable=True):
        locked = _lock_run(run)
        errors = Errors()
        named, new = _append(
            run,
            entries,
            errors,
            source=Source.API,
            recorded_by=recorded_by,
            declared=acceptance.rule_kinds(locked.acceptance_rule),
        )
        errors.raise_if_any()
        Signal.objects.bulk_create(new)
    return Appended(signals=named, created=len(new))


@dataclass(frozen=True)
class Matched:
    run_ids: list[int]
    created: int


def writable_runs(user: User) -> QuerySet[Run]:
    """Runs the user may add signals to: their own (pushed by them or launched for them), or
    any run for drivers and staff."""
    if user.is_staff or is_driver(user):
        return Run.objects.all()
    return Run.objects.filter(Q(owner=user) | Q(job__owner=user))


def add_late_event(*, user: User, body: Any) -> Matched:
    """Append an event to every run the caller may add signals to whose commit or merge artifact
    matches.

    Whatever the runs' dates (the window only matters when reading). All runs or none: a run
    where the name already has another kind refuses the whole request (E195).
    """
    commit, raw = signal_checks.parse_late_event(body)
    errors = Errors()
    data = signal_checks.parse_signal(raw, "", errors)
    errors.raise_if_any()
    assert data is not None  # parsed without errors
    with transaction.atomic(durable=True):
        ids = (
            writable_runs(user)
            .filter(Q(commit=commit) | Q(merge_artifact=commit))
            .order_by()
            .values_list("pk", flat=True)
            .distinct()
        )
        runs = _lock_runs(ids)
        new: list[Signal] = []
        for run in runs:
            _, fresh = _append(
                run,
                [("", data)],
                errors,
                source=Source.EVENT,
                recorded_by=user,
                kind_field="name",
                run_label=f"run {run.pk}",
                declared=acceptance.rule_kinds(run.acceptance_rule),
            )
            new.extend(fresh)
        errors.raise_if_any()
        Signal.objects.bulk_create(new)
    return Matched(run_ids=[run.pk for run in runs], created=len(new))


def set_acceptance_rule(*, user: User, body: Any) -> AcceptanceRule:
    """Replace the user's acceptance rule. Runs already recorded keep the rule they stored."""
    rule = acceptance.parse_rule(body)
    with transaction.atomic():
        stored, _ = AcceptanceRule.objects.update_or_create(user=user, defaults=rule)
    return stored


def current_rule_of(user_id: int | None) -> dict[str, Any]:
    """The user's current rule, or the default rule for a user who has not set one."""
    if not user_id:
        return acceptance.default_rule()
    stored = AcceptanceRule.objects.filter(user_id=user_id).values(*rules.RULE_FIELDS)[:1]
    return acceptance.normalized_rule(**stored[0]) if stored else acceptance.default_rule()


def rule_owner_id(run: Run) -> int | None:
    if run.owner_id:
        return run.owner_id
    job = run.job
    return job.owner_id if job is not None else None


# -- receivers of the run substrate (inside its transaction) ------------------------------------


def _mint_id(run: Run, base: str, on_run: list[Signal] | None = None) -> str:
    if on_run is None:
        taken = set(
            Signal.objects.filter(run=run, signal_id__startswith=base).values_list(
                "signal_id", flat=True
            )
        )
    else:
        taken = {s.signal_id for s in on_run if s.signal_id.startswith(base)}
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}~{n}"
    return candidate


#: What the platform records of a run's ``record.metrics.runtime_s``, besides its id and value.
RUNTIME: dict[str, Any] = {
    "kind": "score",
    "name": "runtime_s",
    "unit": "s",
    "better": "lower",
    "scale": "log",
    "tier": "measured",
}


def _runtime_signal(run: Run, errors: Errors, on_run: list[Signal]) -> SignalData | None:
    """``runtime_s`` from ``record.metrics.runtime_s``, unless the latest one says the same.

    ``on_run`` is every signal on the run, oldest first."""
    metrics = run.record.get("metrics") if isinstance(run.record, Mapping) else None
    value = metrics.get("runtime_s") if isinstance(metrics, Mapping) else None
    if value is None:
        return None
    if not checks.is_number(value):
        errors.add("record.metrics.runtime_s", "runtime_s is a number of seconds.", E195)
        return None
    emitted = [s for s in on_run if s.name == "runtime_s" and s.source == Source.PLATFORM]
    if emitted and rules.canonical(emitted[-1].value) == rules.canonical(value):
        return None
    return SignalData(
        id=_mint_id(run, f"runtime_s:{len(emitted) + 1}", on_run),
        value=value,
        observed_at=timezone.now(),
        **RUNTIME,
    )


def record_push(*, run: Run, created: bool, payload: Mapping[str, Any]) -> None:
    """On a push or re-push: runtime_s, the payload's signals and the acceptance rule it names.

    Runs inside the push's transaction, with no savepoint of its own: a ValidationError rolls the
    whole push back.
    """
    given = payload.get("signals")
    entries = signal_checks.parse_signal_body(given, "signals") if given is not None else []
    if created:
        # A run this push inserted: no one else sees it before the push commits, and it holds
        # no signals yet. Nothing to lock, nothing to read.
        on_run: list[Signal] = []
    else:
        _lock_runs([run.pk])
        on_run = list(Signal.objects.filter(run=run).order_by("pk"))
    rule = payload.get("acceptance_rule")
    # A push that gives a rule has it checked against every signal below; otherwise the push's
    # signals are checked against the rule the run stores (the owner's, on a first push).
    declared = acceptance.rule_kinds(run.acceptance_rule) if rule is None else {}
    errors = Errors()
    runtime = _runtime_signal(run, errors, on_run)
    errors.raise_if_any()
    new: list[Signal] = []
    if runtime is not None:
        _, fresh = _append(
            run,
            [("record.metrics.runtime_s", runtime)],
            errors,
            source=Source.PLATFORM,
            kind_field="",
            on_run=on_run,
            declared=declared,
        )
        errors.raise_if_any()
        new += fresh
        on_run = [*on_run, *fresh]
    _, fresh = _append(
        run,
        entries,
        errors,
        source=Source.PUSH,
        recorded_by=run.pushed_by,
        on_run=on_run,
        declared=declared,
    )
    errors.raise_if_any()
    Signal.objects.bulk_create([*new, *fresh])
    if rule is not None:
        run.acceptance_rule = acceptance.parse_rule(
            rule, "acceptance_rule", run_kinds=_names_on(run, _rule_names_in(rule))
        )
        run.save(update_fields=["acceptance_rule"])


def snapshot_rule(*, run: Run, payload: Mapping[str, Any]) -> None:
    """Before a new run is stored: it keeps its owner's current acceptance rule, unless the push
    names one (checked against the run's signals once they are stored, by ``record_push``)."""
    if payload.get("acceptance_rule") is None:
        run.acceptance_rule = current_rule_of(rule_owner_id(run))


def _rule_names_in(raw: Any) -> set[str]:
    """The names a rule not yet validated mentions, to look their kinds up on the run."""
    if not isinstance(raw, Mapping):
        return set()
    requires = raw.get("requires")
    excludes = raw.get("excludes_events")
    if excludes is None:
        excludes = rules.DEFAULT_EXCLUDES_EVENTS
    names = {
        name
        for listed in (requires, excludes)
        if isinstance(listed, (list, tuple))
        for name in listed
        if isinstance(name, str)
    }
    score = raw.get("score")
    if isinstance(score, Mapping) and isinstance(score.get("name"), str):
        names.add(score["name"])
    return names


def record_referee(*, review: Review) -> None:
    """A review's verdict is also a ``referee`` verdict signal on its run (reported)."""
    if not review.verdict:
        return
    run = review.run
    with transaction.atomic():
        locked = _lock_run(run)
        data = SignalData(
            id=_mint_id(run, f"referee:{review.pk}"),
            kind="verdict",
            name="referee",
            value=review.verdict,
            observed_at=review.created_at,
            tier="reported",
            at_attempt=str(run.job.attempt) if run.job is not None else None,
            ext={"review": review.pk},
        )
        errors = Errors()
        _, fresh = _append(
            run,
            [("verdict", data)],
            errors,
            source=Source.REVIEW,
            recorded_by=review.reviewer,
            kind_field="",
            declared=acceptance.rule_kinds(locked.acceptance_rule),
        )
        errors.raise_if_any()
        Signal.objects.bulk_create(fresh)
