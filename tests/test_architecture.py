"""docs/architecture.md stays true: every function it names exists; each hook runs exactly the
consumers loopweb.pipeline.consumers declares for it, in that order, and the document lists them
so; a push sends its hooks as the declaration's ``PUSH`` says and takes its locks in the one
order."""

import importlib
import re
from pathlib import Path

import pytest

from ladders import lifecycle
from ladders.models import Dispatch, Ladder
from loopweb.pipeline import consumers
from loopweb.pipeline.consumers import HOOKS, PUSH, Lock, Own
from loopweb.runs import hooks
from loopweb.runs.models import Job, Review, Run

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
NAMED = re.compile(r"`((?:loopweb|ladders|signals_app|evalsets)(?:\.\w+)+)`")

#: The sender each hook is sent with.
SENDERS = {
    hooks.attempt_ending: Job,
    hooks.retry_enqueued: Job,
    hooks.jobs_ended: Job,
    hooks.run_pushing: Run,
    hooks.run_pushed: Run,
    hooks.run_reviewed: Review,
    lifecycle.ladder_configured: Ladder,
}

#: Every hook the substrate and the ladder engine send, by its own name (``run_pushed``).
EVERY_HOOK = {name.rsplit(".", 1)[1]: hook for name, hook in consumers.every_hook().items()}


def resolve(dotted: str):
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def receivers_of(hook, sender) -> list[str]:
    sync, asynchronous = hook._live_receivers(sender)
    return [f"{r.__module__}.{r.__qualname__}" for r in [*sync, *asynchronous]]


def declared(hook) -> list[str]:
    return [consumer.name for consumer in HOOKS[hook]]


def documented_receivers() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].strip("`") in EVERY_HOOK:
            rows[cells[0].strip("`")] = re.findall(r"`([\w.]+)`", cells[2])
    return rows


def test_every_function_the_architecture_names_exists():
    names = sorted(set(NAMED.findall(DOC.read_text())))
    assert len(names) > 50
    missing = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError):
            missing.append(name)
    assert missing == []


def test_every_hook_sent_has_its_consumers_declared():
    assert set(EVERY_HOOK.values()) == set(HOOKS)


@pytest.mark.parametrize("name", sorted(EVERY_HOOK))
def test_each_hook_runs_exactly_its_declared_consumers_in_order(name):
    """An app connecting a consumer itself (undeclared, or out of the declared order) fails it."""
    hook = EVERY_HOOK[name]
    assert receivers_of(hook, SENDERS.get(hook, Dispatch)) == declared(hook)
    assert consumers.connected(hook) == declared(hook)


def test_the_system_check_refuses_an_undeclared_consumer_and_one_out_of_order():
    hook = hooks.run_pushed
    saved = list(hook.receivers)

    def undeclared(sender, **kwargs):
        pass

    try:
        assert consumers.check() == []
        hook.connect(undeclared, weak=False)
        [error] = consumers.check()
        assert (error.id, error.obj) == ("pipeline.E001", "loopweb.runs.hooks.run_pushed")
        hook.disconnect(undeclared)
        first = HOOKS[hook][0]
        hook.disconnect(dispatch_uid=first.name)
        hook.connect(first.receiver, dispatch_uid=first.name)  # now last
        assert [error.id for error in consumers.check()] == ["pipeline.E001"]
    finally:
        hook.receivers = saved
        hook.sender_receivers_cache.clear()
    assert consumers.check() == []


def test_connecting_again_changes_nothing():
    before = {hook: consumers.connected(hook) for hook in HOOKS}
    consumers.connect()
    assert {hook: consumers.connected(hook) for hook in HOOKS} == before


#: Where a hook may be connected: the one module that declares its consumers.
CONNECTED_IN = "loopweb/pipeline/consumers.py"


def test_no_app_connects_a_hook_in_its_own_code():
    root = DOC.parent.parent
    connecting = re.compile(rf"\b({'|'.join(EVERY_HOOK)})\.connect\(")
    found = [
        str(path.relative_to(root))
        for package in ("loopweb", "ladders", "signals_app", "evalsets")
        for path in (root / package).rglob("*.py")
        if connecting.search(path.read_text())
    ]
    assert found == []
    assert "connect(consumer.receiver" in (root / CONNECTED_IN).read_text()


def test_the_architecture_lists_the_consumers_as_declared():
    assert documented_receivers() == {name: declared(hook) for name, hook in EVERY_HOOK.items()}


def test_each_hooks_consumers_take_their_locks_in_the_one_order():
    for hook, declared_consumers in HOOKS.items():
        locks = [lock for consumer in declared_consumers for lock in consumer.locks]
        assert locks == sorted(locks), hook


def test_a_push_takes_its_locks_in_the_one_order_the_dispatch_first():
    locks = consumers.locks_taken(PUSH)
    assert locks == sorted(locks)
    assert locks[:3] == [Lock.DISPATCH, Lock.CLIMBER, Lock.JOB]
    [(hook, consumer)] = [(s, c) for s in PUSH if s in HOOKS for c in HOOKS[s] if c.locks][:1]
    assert (hook, consumer.name) == (
        hooks.attempt_ending,
        "ladders.receivers.lock_dispatch_of_origin",
    )


def pushes_hooks() -> list:
    return [step for step in PUSH if not isinstance(step, Own)]


def in_order_within(sent: list, declared_steps: list) -> bool:
    """Whether ``sent`` is ``declared_steps`` with some left out, the rest in the same order."""
    rest = iter(declared_steps)
    return all(any(step is hook for step in rest) for hook in sent)


class Heard:
    """The substrate's hooks as a push sends them, in order."""

    def __init__(self):
        self.sent = []

    def __enter__(self):
        for hook in pushes_hooks():
            hook.connect(self.hear, weak=False, dispatch_uid="heard")
        return self.sent

    def __exit__(self, *exc):
        for hook in pushes_hooks():
            hook.disconnect(dispatch_uid="heard")

    def hear(self, sender, signal, **kwargs):
        self.sent.append(signal)


def test_a_push_sends_its_hooks_as_push_declares_them(owner, driver):
    from ladders import services
    from tests.ladders.builders import PERFECT, claim_all, climbers, make_ladder, push, versions

    ladder = make_ladder(owner, versions(1), climbers(1), runsPerCell=2, retryCount=1)
    services.start_dispatch(ladder=ladder)
    completing, failing = claim_all(driver)
    order = pushes_hooks()

    with Heard() as completed:
        push(driver, completing, record=PERFECT)
    with Heard() as retried:
        push(driver, failing, outcome="catastrophic", record={})
    with Heard() as again:
        push(driver, completing, record=PERFECT)

    assert completed == [
        hooks.attempt_ending,
        hooks.run_pushing,
        hooks.jobs_ended,
        hooks.run_pushed,
    ]
    assert retried == [
        hooks.attempt_ending,
        hooks.run_pushing,
        hooks.retry_enqueued,
        hooks.run_pushed,
    ]
    assert again == [hooks.attempt_ending, hooks.run_pushed]
    assert all(in_order_within(sent, order) for sent in (completed, retried, again))


def test_in_order_within_refuses_a_hook_out_of_order():
    order = pushes_hooks()
    assert in_order_within([hooks.attempt_ending, hooks.run_pushed], order)
    assert not in_order_within([hooks.run_pushed, hooks.attempt_ending], order)


def push_section() -> str:
    text = DOC.read_text()
    return text[text.index("## A push, step by step") : text.index("## A launch pass")]


def test_the_push_step_by_step_names_its_consumers_in_the_declared_order():
    section = push_section()
    where = 0
    for hook in pushes_hooks():
        for consumer in HOOKS[hook]:
            found = section.find(f"`{consumer.name}`", where)
            assert found >= 0, f"{consumer.name} is not named after what runs before it"
            where = found


PYPROJECT = DOC.parent.parent / "pyproject.toml"


def layers_section() -> str:
    text = DOC.read_text()
    return text[text.index("## Layers") : text.index("## Glossary")]


def documented_layer(name: str) -> list[str]:
    """The packages of a row of the Layers table, in the order written."""
    for line in layers_section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) >= 2 and cells[0] == name:
            return re.findall(r"`([\w.]+)`", cells[1])
    raise AssertionError(f"no {name!r} row in the Layers table")


def contract_layers() -> list[list[str]]:
    """The layers contract's layers, top first, each as its package names."""
    import tomllib

    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in config if c["type"] == "layers"]
    return [re.findall(r"[\w.]+", layer) for layer in layers]


def test_the_shared_layer_is_the_import_contracts_bottom_layer():
    assert documented_layer("shared") == contract_layers()[-1]


def test_the_top_layer_lists_every_app_the_import_contract_puts_there():
    assert documented_layer("top") == contract_layers()[1]


def test_every_folder_the_layout_names_exists_and_every_pages_folder_is_named():
    root = DOC.parent.parent
    named = re.findall(r"`((?:loopweb|ladders|signals_app|evalsets)/[\w/.]*)`", layers_section())
    assert named, "the layout names its folders"
    assert [path for path in named if not (root / path).exists()] == []
    pages = {
        f"{path.relative_to(root)}/"
        for package in ("loopweb", "ladders", "signals_app", "evalsets")
        for path in (root / package).rglob("pages")
        if path.is_dir()
    }
    assert pages <= set(named)


def glossary() -> str:
    text = DOC.read_text()
    return text[text.index("## Glossary") : text.index("## The hooks and their receivers")]


def test_each_word_of_the_glossary_is_defined_once():
    defined = re.findall(r"\*\*([^*]+)\*\*", glossary())
    assert len(defined) > 15
    assert sorted(word for word in set(defined) if defined.count(word) > 1) == []


#: Where ``claim`` may name something: the driver's protocol.
CLAIM_SPOKEN_IN = (
    "loopweb/runs/claim.py",
    "loopweb/runs/services.py",
    "loopweb/runs/api/",
    "loopweb/driver/",
    "loopweb/telemetry.py",
    "loopweb/ops/middleware.py",
)


def test_claim_names_only_a_drivers_claim_in_the_code():
    import io
    import tokenize

    root = DOC.parent.parent
    elsewhere = {}
    for package in ("loopweb", "ladders", "signals_app", "evalsets"):
        for path in (root / package).rglob("*.py"):
            where = str(path.relative_to(root))
            if "migrations" in path.parts or where.startswith(CLAIM_SPOKEN_IN):
                continue
            tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            names = {t.string for t in tokens if t.type == tokenize.NAME}
            if claims := sorted(name for name in names if "claim" in name.lower()):
                elsewhere[where] = claims
    assert elsewhere == {}


def test_the_coverage_floor_measures_every_pure_module():
    """The pure modules (no Django) hold the rules; make test-fast's floor covers each of them."""
    import tomllib

    tool = tomllib.loads(PYPROJECT.read_text())["tool"]
    (pure,) = [
        c["source_modules"]
        for c in tool["importlinter"]["contracts"]
        if c["name"].startswith("Pure modules")
    ]
    measured = {
        path.removesuffix(".py").replace("/", ".") for path in tool["coverage"]["report"]["include"]
    }
    assert sorted(set(pure) - measured) == []
