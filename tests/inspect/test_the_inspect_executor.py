"""The Inspect executor on its own: one job is one real Inspect evaluation of the job's case
with the model its combination maps to (Inspect's mock model, scripted, so no network), and
what it produces is the run a driver pushes, or the failure it reports."""

import asyncio
import threading
import time

import pytest
from inspect_ai.solver import solver

from loopweb.driver import Failure, Job, RateLimited
from loopweb.driver.inspect_executor import InspectExecutor, classify
from tests.inspect import scripted


def job_of(case: str, model: str, **data) -> Job:
    return Job(
        {
            "id": 7,
            "case": case,
            "version": "1",
            "variant": "default",
            "engine": None,
            "attempt": 1,
            "cellKey": f"{case}|{model}",
            "combination": {"id": 1, "kind": "harness", "key": f"inspect|{model}|acme",
                            "harness": "inspect", "model": model, "provider": "acme"},
            **data,
        }
    )  # fmt: skip


@pytest.fixture
def executor(tmp_path):
    return InspectExecutor.from_module("tests.inspect.scripted", log_dir=str(tmp_path))


def test_a_passing_evaluation_is_a_completed_run_with_an_item_per_scorer_and_sample(tmp_path):
    executor = InspectExecutor.from_module(
        "tests.inspect.scripted", log_dir=str(tmp_path), log_url="https://logs.example/inspect/"
    )
    result = executor(job_of("inspect-sums", "steady"))
    assert result.outcome == "completed"
    record = result.record
    assert record["checklist"] == {"match": True, "match:two-two": True, "match:three-five": True}
    assert record["toolchain"] == {"build": "ok", "loaded": True}
    metrics = record["metrics"]
    assert (metrics["input_tokens"], metrics["output_tokens"]) == (24, 6)
    assert metrics["usd_micros"] == 24 * 2 + 6 * 10  # $2 and $10 a million tokens
    assert metrics["wall_ms"] > 0 and metrics["runtime_s"] == pytest.approx(
        metrics["wall_ms"] / 1000, abs=0.01
    )
    # The .eval log, written where the deployment said, linked at its public address.
    [written] = tmp_path.glob("*.eval")
    assert record["artifacts"] == [
        {"name": "inspect-log", "url": f"https://logs.example/inspect/{written.name}"}
    ]
    assert record["inspect"]["status"] == "success"
    assert record["inspect"]["scores"]["match"]["accuracy"] == 1.0
    assert executor.url_of("/var/logs/x.eval") == "https://logs.example/inspect/x.eval"
    assert InspectExecutor(tasks={}, models={}).url_of("/var/logs/x.eval") == "/var/logs/x.eval"


def test_each_scorer_of_a_failed_evaluation_reads_false(executor):
    record = executor(job_of("inspect-capitals", "shaky")).record
    assert record["checklist"] == {
        "match": False,
        "match:france": False,
        "match:italy": False,
        "includes": False,
        "includes:france": False,
        "includes:italy": False,
    }
    assert record["toolchain"]["loaded"] is True


def test_a_providers_429_before_any_work_releases_the_job_with_its_retry_after(executor):
    with pytest.raises(RateLimited) as raised:
        executor(job_of("inspect-sums", "throttled"))
    assert raised.value.retry_after == 7
    assert "429" in raised.value.detail


def test_a_models_error_is_a_harness_error(executor):
    with pytest.raises(Failure) as raised:
        executor(job_of("inspect-sums", "garbled"))
    assert raised.value.failure == "harnessError"
    assert "unparseable tool call" in raised.value.detail


def test_a_case_or_model_the_driver_has_no_mapping_for_fails_as_infrastructure(executor):
    with pytest.raises(Failure) as raised:
        executor(job_of("platformer-1", "steady"))
    assert (raised.value.failure, "platformer-1" in raised.value.detail) == ("infrastructure", True)
    with pytest.raises(Failure) as raised:
        executor(job_of("inspect-sums", "unheard-of"))
    assert (raised.value.failure, "unheard-of" in raised.value.detail) == ("infrastructure", True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("RateLimitError('Error code: 429 - rate_limit_exceeded')", ("rateLimited", None)),
        ("openai.RateLimitError: Too Many Requests. Retry-After: 20", ("rateLimited", 20.0)),
        (
            "SandboxEnvironment failed to start: docker compose up exited 1",
            ("infrastructure", None),
        ),
        ("RuntimeError: No sandbox environment has been provided", ("infrastructure", None)),
        ("anthropic.BadRequestError: Error code: 400 - prompt is too long", ("harnessError", None)),
    ],
)
def test_inspects_errors_map_to_the_failure_kinds(text, expected):
    assert classify(text) == expected


@solver
def dawdle():
    async def solve(state, generate):
        await asyncio.sleep(60)
        return state

    return solve


def test_cancelling_a_job_stops_its_evaluation(tmp_path, monkeypatch):
    slow = scripted.sums()
    slow.solver = dawdle()
    monkeypatch.setitem(scripted.TASKS, "inspect-slow", slow)
    executor = InspectExecutor.from_module("tests.inspect.scripted", log_dir=str(tmp_path))
    job = job_of("inspect-slow", "steady")
    threading.Timer(1.0, job.cancelled.set).start()
    started = time.monotonic()
    with pytest.raises(Failure) as raised:
        executor(job)
    assert raised.value.failure == "canceled"
    assert time.monotonic() - started < 8


def test_the_plain_client_and_the_commands_import_neither_inspect_nor_django():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c",
         "import sys, loopweb.driver.cli, loopweb.driver.ci, loopweb.driver.inspect_executor;"
         " print(sorted({m.split('.')[0] for m in sys.modules} & {'inspect_ai', 'django'}))"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "[]", done.stderr


def test_loopweb_driver_inspect_runs_one_evaluation_at_a_time_and_names_a_bad_module(capsys):
    from loopweb.driver import cli

    base = ["--url", "http://127.0.0.1:9", "--token", "t", "--inspect"]
    with pytest.raises(SystemExit):
        cli.main([*base, "tests.inspect.scripted", "--concurrency", "2"])
    assert "one evaluation at a time" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main([*base, "tests.inspect.no_such_tasks"])
    assert "tests.inspect.no_such_tasks" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main([*base, "tests.inspect"])  # a module without TASKS
    assert "has no TASKS" in capsys.readouterr().err


def test_an_executor_called_beside_a_running_event_loop_evaluates_on_a_thread_of_its_own(
    tmp_path,
):
    """A driver embedded in an asynchronous program calls the executor from a thread whose event
    loop is running, where ``asyncio.run`` refuses to start: the evaluation runs apart."""
    import asyncio

    loop = asyncio.new_event_loop()
    asyncio._set_running_loop(loop)
    try:
        test_a_passing_evaluation_is_a_completed_run_with_an_item_per_scorer_and_sample(tmp_path)
    finally:
        asyncio._set_running_loop(None)
        loop.close()
