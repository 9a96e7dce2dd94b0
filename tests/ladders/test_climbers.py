"""Seed 004, "Climbers"."""

from ladders import services
from ladders.models import DispatchClimber, Ladder
from loopweb.runs.models import GGConfiguration, ModelEntry
from tests.factories import CombinationFactory, GGConfigurationFactory, gg_combination
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    api_ladder,
    climber_of,
    climbers,
    ladder_jobs,
    make_ladder,
    outside,
    progress_of,
    push_run_of,
    queued,
    rung,
    set_status,
    versions,
    work,
)


def group(api, *combos) -> int:
    answer = api.post(
        "/api/groups/",
        {"name": "models", "kind": "combo", "members": [c.pk for c in combos]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    return answer.json()["id"]


def trio():
    """A gg configuration of three roles, with two bindings that differ only in the order of
    the non-launching roles: different keys, the same cells."""
    configuration = GGConfigurationFactory(name="trio", roles=["planner", "coder", "tester"])
    first = gg_combination(configuration, {"planner": "a", "coder": "b", "tester": "c"})
    second = gg_combination(configuration, {"planner": "a", "coder": "c", "tester": "b"})
    return configuration, first, second


def retry(ladder, key):
    services.retry_climber(ladder=ladder, combination_key=key)


def test_climbers_are_referenced_through_combo_groups_and_one_off_combinations(owner_api):
    """ "The combinations that climb are called climbers, and they are referenced through the
    same kind = "combo" coverage groups a plan uses, plus any one-off combinations pinned on
    the ladder." """
    grouped_a, grouped_b, oneoff = climbers(3)
    body = api_ladder(
        owner_api,
        rungs=[rung(v) for v in versions(1)],
        groups=[group(owner_api, grouped_a, grouped_b)],
        combinations=[oneoff.pk],
    )
    board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [c["key"] for c in board["climbers"]] == [grouped_a.key, grouped_b.key, oneoff.key]
    assert sorted(j.combination_id for j in queued()) == sorted(
        c.pk for c in (grouped_a, grouped_b, oneoff)
    )


def test_one_saved_group_drives_every_ladder_that_references_it(owner_api):
    """ "One saved set of models therefore drives both a plan and a ladder": a group is
    referenced, not copied, so an edit to it reaches the next Run of everything using it."""
    first, second, added = climbers(3)
    saved = group(owner_api, first, second)
    ladders = [
        api_ladder(owner_api, name=name, rungs=[rung(v) for v in versions(1, prefix=name)])
        for name in ("left", "right")
    ]
    for body in ladders:
        body["groups"] = [saved]
        assert owner_api.put(f"/api/ladders/{body['id']}/", body, format="json").status_code == 200
    edit = owner_api.put(
        f"/api/groups/{saved}/",
        {"name": "models", "kind": "combo", "members": [first.pk, second.pk, added.pk]},
        format="json",
    )
    assert edit.status_code == 200, edit.json()
    for body in ladders:
        board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
        assert [c["key"] for c in board["climbers"]] == [first.key, second.key, added.key]


def test_a_gg_configuration_climbs_beside_a_harness_against_the_same_gate(owner, driver, run_tasks):
    """ "A climber is either shape a combination takes, so a gg configuration climbs beside a
    third-party harness and is measured against the same gate." """
    harness = climbers(1)[0]
    configuration = GGConfigurationFactory(name="pair", roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    ladder = make_ladder(owner, versions(2), [harness, gg], gate={"floor": "great"})
    services.start_dispatch(ladder=ladder)
    assert sorted(j.combination_id for j in queued(ladder)) == sorted([harness.pk, gg.pk])
    passable = {**PERFECT, "checklist": {"starts": True, "jump": True, "score": True}}
    work(driver, run_tasks, lambda job: PERFECT if job.combination_id == harness.pk else passable)
    board = progress_of(ladder)
    assert climber_of(board, harness.key)["status"] == "completed"
    gg_climber = climber_of(board, gg.key)
    assert (gg_climber["status"], gg_climber["slots"][0]["status"]) == ("failed", "failed")
    assert gg_climber["label"] == "pair (coder: c1, planner: p1)"


def test_every_climber_carries_its_canonical_key(owner, owner_api):
    """ "Every climber carries a key, the canonical text a dispatch records its climber state
    against. A harness climber's key is its harness|model|provider triple, and a gg climber's
    is the configuration it names and the models it binds." """
    harness = CombinationFactory(harness="aider", model="gpt-x", provider="acme")
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(1)], combinations=[harness.pk, gg.pk]
    )
    board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [c["key"] for c in board["climbers"]] == [
        "aider|gpt-x|acme",
        f"gg:{configuration.pk}|coder=c1,planner=p1",
    ]
    assert list(
        DispatchClimber.objects.order_by("position").values_list("combination_key", flat=True)
    ) == [
        "aider|gpt-x|acme",
        f"gg:{configuration.pk}|coder=c1,planner=p1",
    ]
    # Retry addresses a climber by that key.
    answer = owner_api.post(
        f"/api/ladders/{body['id']}/climbers/retry", {"climber": "aider|gpt-x"}, format="json"
    )
    assert answer.status_code == 400


def test_the_key_separates_two_gg_climbers_running_one_configuration_on_different_models(
    owner, driver, run_tasks
):
    """ "The key has to distinguish two gg climbers running one configuration on different
    models, since those are the two arms a ladder exists to separate." """
    configuration = GGConfigurationFactory(name="pair", roles=["planner", "coder"])
    arm_a = gg_combination(configuration, {"planner": "p1", "coder": "small"})
    arm_b = gg_combination(configuration, {"planner": "p1", "coder": "large"})
    ladder = make_ladder(owner, versions(2), [arm_a, arm_b])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: BROKEN if job.combination_id == arm_a.pk else PERFECT)
    board = progress_of(ladder)
    assert len({c["key"] for c in board["climbers"]}) == 2
    assert [c["status"] for c in board["climbers"]] == ["failed", "completed"]
    assert (
        board["climbers"][0]["slots"][0]["cellKey"] != board["climbers"][1]["slots"][0]["cellKey"]
    )


def test_a_dispatch_climbs_its_climbers_in_resolved_declaration_order(owner, owner_api):
    """ "A dispatch climbs its climbers in their resolved declaration order: the referenced
    groups' members in group order, then the one-offs." """
    a, b, c, d, e = climbers(5)
    later_group = group(owner_api, d, c)
    earlier_group = group(owner_api, b, a)
    body = api_ladder(
        owner_api,
        rungs=[rung(v) for v in versions(1)],
        groups=[later_group, earlier_group],
        combinations=[e.pk],
    )
    board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [c["key"] for c in board["climbers"]] == [d.key, c.key, b.key, a.key, e.key]
    assert [j.combination_id for j in queued()] == [d.pk, c.pk, b.pk, a.pk, e.pk]


def test_a_gg_climbers_configuration_is_resolved_when_each_of_its_runs_launches(owner):
    """ "A gg climber's configuration is resolved when each of its runs launches": a
    configuration deleted between Run and the launch pass launches nothing."""
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    harness = climbers(1)[0]
    ladder = make_ladder(owner, versions(1), [gg, harness])
    services.start_dispatch(ladder=ladder, run_pass=False)
    configuration.delete()
    services.run_launch_pass(ladder_id=ladder.pk)
    assert [j.combination_id for j in queued(ladder)] == [harness.pk]
    climber = climber_of(progress_of(ladder), gg.key)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")


def test_a_dispatch_finds_a_climbers_runs_by_its_cells(owner, driver):
    """ "A dispatch finds a climber's runs by the climber's cells: the harness, the launch model,
    and for a gg climber the configuration's id and the models its bound set runs." A run of
    another binding with the same cells is the climber's run."""
    _, climbing, same_cells = trio()
    [step] = versions(1)
    outside(driver, step, same_cells, PERFECT)
    ladder = make_ladder(owner, [step], [climbing])
    services.start_dispatch(ladder=ladder)
    [climber] = progress_of(ladder)["climbers"]
    assert climber["status"] == "completed"
    assert queued(ladder) == []
    cell = DispatchClimber.objects.get(dispatch__ladder=ladder).combination_cell
    assert cell == {
        "harness": "gg",
        "model": "a",
        "provider": "acme",
        "configuration": climbing.configuration_id,
        "boundModels": ["a", "b", "c"],
    }


def test_cells_are_pinned_at_run(owner):
    """ "The cells are pinned on the climber when it first resolves, at Run" """
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    harness = climbers(1)[0]
    ladder = make_ladder(owner, versions(1), [harness, gg])
    services.start_dispatch(ladder=ladder, run_pass=False)
    cells = list(
        DispatchClimber.objects.order_by("position").values_list("combination_cell", flat=True)
    )
    assert [(c["harness"], c["model"]) for c in cells] == [("aider", harness.model), ("gg", "p1")]


def test_a_climber_that_cannot_resolve_at_run_is_pinned_by_the_first_pass_that_can(
    owner, run_tasks
):
    """ "... or at the first launch pass that can resolve it." """
    configuration = GGConfigurationFactory(roles=["planner", "coder", "tester"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})  # tester unbound
    ladder = make_ladder(owner, versions(1), [gg])
    services.start_dispatch(ladder=ladder)
    row = DispatchClimber.objects.get()
    assert row.combination_cell is None
    climber = progress_of(ladder)["climbers"][0]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")
    assert "tester" in climber["problem"]
    assert queued(ladder) == []

    configuration.roles = ["planner", "coder"]
    configuration.save()
    retry(ladder, gg.key)
    row.refresh_from_db()
    assert row.combination_cell["boundModels"] == ["c1", "p1"]
    [job] = queued(ladder)
    assert job.combination_cell == row.combination_cell


def test_editing_or_deleting_a_gg_configuration_mid_dispatch_cannot_hide_what_was_read(
    owner, driver, run_tasks
):
    """ "They are never resolved again, so editing or deleting a gg configuration mid-dispatch
    cannot hide the runs the dispatch already read. Those runs keep counting, and a climber
    with runs in flight keeps running." """
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    ladder = make_ladder(owner, versions(2), [gg], runsPerCell=2, gate={"threshold": {"count": 2}})
    services.start_dispatch(ladder=ladder)
    done, running = queued(ladder)
    set_status(driver, running, "running")
    push_run_of(driver, done, PERFECT)
    run_tasks()
    GGConfiguration.objects.filter(pk=configuration.pk).delete()

    climber = progress_of(ladder)["climbers"][0]
    assert climber["status"] == "running"
    assert (climber["tally"]["counted"], climber["tally"]["inFlight"]) == (1, 1)
    push_run_of(driver, running, PERFECT)
    run_tasks()
    climber = progress_of(ladder)["climbers"][0]
    assert [s["status"] for s in climber["slots"]] == ["passed", "blocked"]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")
    assert [j.case for j in ladder_jobs(ladder)] == ["step-1", "step-1"]


def test_a_climber_whose_configuration_resolves_to_other_cells_is_held_until_restored(
    owner, driver, run_tasks
):
    """ "A climber whose configuration now resolves to other cells is held unlaunchable, since
    its new runs would land where the dispatch never looks. Restoring the configuration ...
    resolves it." """
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    ladder = make_ladder(owner, versions(2), [gg])
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    pinned = job.cell_key
    configuration.roles = ["coder", "planner"]  # the launch model is now c1
    configuration.save()
    push_run_of(driver, job, PERFECT)
    run_tasks()
    climber = progress_of(ladder)["climbers"][0]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")
    assert climber["slots"][0]["status"] == "passed"  # what it read still counts
    assert queued(ladder) == []

    configuration.roles = ["planner", "coder"]
    configuration.save()  # restored: the climb moves on by itself, no Retry needed
    run_tasks()
    [relaunched] = queued(ladder)
    assert relaunched.case == "step-2"
    assert relaunched.cell_key.split("::")[1] == pinned.split("::")[1]


def test_a_stop_and_a_new_run_resolves_a_climber_held_on_other_cells(owner, driver, run_tasks):
    """ "... or a Stop and a new Run, resolves it." """
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    ladder = make_ladder(owner, versions(2), [gg])
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    configuration.roles = ["coder", "planner"]
    configuration.save()
    push_run_of(driver, job, PERFECT)
    run_tasks()
    services.stop_dispatch(ladder=ladder)
    services.start_dispatch(ladder=ladder)
    assert DispatchClimber.objects.get().combination_cell["model"] == "c1"
    [fresh] = queued(ladder)
    # New cells: the old run is not theirs, so the climb starts again at rung one.
    assert (fresh.case, fresh.combination_cell["model"]) == ("step-1", "c1")


def test_two_declarations_that_resolve_to_the_same_cells_are_one_climber(
    owner, owner_api, driver, run_tasks
):
    """ "Two declarations that resolve to the same cells are one climber. A Run stores the first
    and drops the other, so a dispatch never launches or judges one set of runs twice." """
    _, first, same_cells = trio()
    harness = climbers(1)[0]
    body = api_ladder(
        owner_api,
        rungs=[rung(v) for v in versions(2)],
        groups=[group(owner_api, first, harness)],
        combinations=[harness.pk, same_cells.pk],
    )
    board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [c["key"] for c in board["climbers"]] == [first.key, harness.key]
    assert DispatchClimber.objects.count() == 2
    assert sorted(j.combination_id for j in queued()) == sorted([first.pk, harness.pk])
    work(driver, run_tasks, PERFECT)
    assert len(queued()) == 0
    assert sorted((j.case, j.combination_id) for j in ladder_jobs(Ladder(pk=body["id"]))) == sorted(
        (case, combo.pk) for case in ("step-1", "step-2") for combo in (first, harness)
    )


def test_a_climber_that_first_resolves_mid_dispatch_to_cells_another_holds_is_held(
    owner, run_tasks
):
    """ "A climber that first resolves mid-dispatch to cells another climber already holds is
    held unlaunchable." """
    _, first, same_cells = trio()
    ModelEntry.objects.filter(name="a").delete()  # the launch model: neither resolves at Run
    ladder = make_ladder(owner, versions(1), [first, same_cells])
    services.start_dispatch(ladder=ladder)
    assert list(DispatchClimber.objects.values_list("combination_cell", flat=True)) == [None, None]
    ModelEntry.objects.create(name="a", provider="acme")
    retry(ladder, first.key)
    board = progress_of(ladder)
    holder, held = board["climbers"]
    assert holder["status"] == "running"
    assert (held["status"], held["blockedReason"]) == ("blocked", "unlaunchable")
    assert "held" in held["problem"]
    assert [j.combination_id for j in queued(ladder)] == [first.pk]
    # Retrying the held climber does not launch the cells twice.
    retry(ladder, same_cells.key)
    assert [j.combination_id for j in queued(ladder)] == [first.pk]
