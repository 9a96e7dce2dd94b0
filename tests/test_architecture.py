"""docs/architecture.md stays true: every function it names exists, and each of the substrate's
hooks has the receivers it lists, in that order. A change to the wiring changes this file."""

import importlib
import re
from pathlib import Path

import pytest

from ladders import lifecycle
from ladders.models import Dispatch, Ladder
from loopweb.runs import hooks
from loopweb.runs.models import Job, Review, Run

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
NAMED = re.compile(r"`((?:loopweb|ladders|signals_app|evalsets)(?:\.\w+)+)`")

#: Each hook, the sender it is sent with, and its receivers in the order they run.
RECEIVERS = {
    "attempt_ending": (Job, ["ladders.receivers.lock_dispatch_of_origin"]),
    "retry_enqueued": (
        Job,
        [
            "ladders.receivers.cancel_retry_of_stopped_dispatch",
            "loopweb.ops.events.on_retry_enqueued",
        ],
    ),
    "jobs_ended": (
        Job,
        ["ladders.receivers.on_jobs_ended", "loopweb.ops.events.on_jobs_ended"],
    ),
    "run_pushing": (
        Run,
        ["signals_app.receivers.on_run_pushing", "ladders.receivers.publish_on_completion"],
    ),
    "run_pushed": (
        Run,
        [
            "signals_app.receivers.on_run_pushed",
            "evalsets.receivers.run_pushed",
            "ladders.receivers.on_run_pushed",
            "loopweb.ops.events.on_run_pushed",
            "loopweb.reviewing.receivers.on_run_pushed",
        ],
    ),
    "run_reviewed": (
        Review,
        ["signals_app.receivers.on_run_reviewed", "loopweb.reviewing.receivers.on_run_reviewed"],
    ),
}


#: The ladder engine's lifecycle hooks and their receivers, in order (none in the engine itself:
#: the apps above it, history and webhooks, record what they announce).
LIFECYCLE: dict[str, list[str]] = {
    "dispatch_started": [
        "loopweb.webhooks.receivers.dispatch_started",
        "loopweb.history.receivers.on_dispatch_started",
    ],
    "dispatch_ended": [
        "loopweb.webhooks.receivers.dispatch_ended",
        "loopweb.history.receivers.on_dispatch_ended",
    ],
    "dispatch_replaced": ["loopweb.history.receivers.on_dispatch_replaced"],
    "climbers_blocked": ["loopweb.webhooks.receivers.climbers_blocked"],
    "dispatch_needs_attention": ["loopweb.webhooks.receivers.dispatch_needs_attention"],
    "climber_retried": ["loopweb.history.receivers.on_climber_retried"],
    "ladder_configured": ["loopweb.history.receivers.on_ladder_configured"],
}


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


def documented_receivers() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].strip("`") in {*RECEIVERS, *LIFECYCLE}:
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


@pytest.mark.parametrize("name", sorted(RECEIVERS))
def test_each_hook_has_its_receivers_in_order(name):
    sender, expected = RECEIVERS[name]
    assert receivers_of(getattr(hooks, name), sender) == expected


@pytest.mark.parametrize("name", sorted(LIFECYCLE))
def test_each_lifecycle_hook_has_its_receivers_in_order(name):
    hook = getattr(lifecycle, name)
    wired = receivers_of(hook, Dispatch) + receivers_of(hook, Ladder)
    assert list(dict.fromkeys(wired)) == LIFECYCLE[name]  # once each, any sender


def test_the_architecture_lists_the_receivers_as_they_are_wired():
    wired = {name: expected for name, (_, expected) in RECEIVERS.items()}
    assert documented_receivers() == {**wired, **LIFECYCLE}


def test_the_hooks_modules_send_only_these_hooks():
    def sent(module):
        return {name for name, value in vars(module).items() if type(value).__name__ == "Signal"}

    assert sent(hooks) == set(RECEIVERS)
    assert sent(lifecycle) == set(LIFECYCLE)


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


def test_the_apps_are_listed_in_the_order_their_hooks_receivers_run():
    from django.conf import settings

    text = DOC.read_text()
    written = text[text.index("Receivers run in the order") :].split("):")[0]
    ours = ("loopweb.", "signals_app", "evalsets", "ladders")
    installed = [app for app in settings.INSTALLED_APPS if app.startswith(ours)]
    listed = [app for app in re.findall(r"`([\w.]+)`", written) if app.startswith(ours)]
    assert listed == installed


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
