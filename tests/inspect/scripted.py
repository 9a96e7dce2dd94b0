"""The Inspect tasks and scripted models of the Inspect tests: a TASKS module as
``loopweb-driver --inspect tests.inspect.scripted`` loads it (docs/drivers.md).

Two tasks, one per rung: sums, then capitals. The model ``steady`` answers every question; the
model ``shaky`` knows its sums but not its capitals. Each scripted answer carries its own usage,
so Inspect's mock model never counts tokens with tiktoken (which would download its encoding).
"""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ModelCost,
    ModelInfo,
    ModelOutput,
    ModelUsage,
    get_model,
    set_model_info,
)
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate

ANSWERS = {
    "What is 2 + 2?": "4",
    "What is 3 + 5?": "8",
    "What is the capital of France?": "Paris",
    "What is the capital of Italy?": "Rome",
}


@task
def sums() -> Task:
    return Task(
        dataset=[
            Sample(id="two-two", input="What is 2 + 2?", target="4"),
            Sample(id="three-five", input="What is 3 + 5?", target="8"),
        ],
        solver=generate(),
        scorer=match(numeric=True),
    )


@task
def capitals() -> Task:
    return Task(
        dataset=[
            Sample(id="france", input="What is the capital of France?", target="Paris"),
            Sample(id="italy", input="What is the capital of Italy?", target="Rome"),
        ],
        solver=generate(),
        scorer=[match(), includes()],
    )


TASKS = {"inspect-sums": sums, "inspect-capitals": capitals}


def scripted(knows: str):
    """A fresh mock model answering the questions that contain ``knows``, and "I don't know"
    to the rest: 12 input and 3 output tokens a call."""

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        question = messages[-1].text
        known = knows in question
        output = ModelOutput.from_content(
            "mockllm/model", ANSWERS[question] if known else "I don't know"
        )
        output.usage = ModelUsage(input_tokens=12, output_tokens=3, total_tokens=15)
        return output

    def model(job):
        return get_model("mockllm/model", custom_outputs=answer, memoize=False)

    return model


def refusing(error: Exception):
    """A mock model whose every call raises ``error``."""

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        raise error

    return lambda job: get_model("mockllm/model", custom_outputs=answer, memoize=False)


class RateLimitError(Exception):
    """What a provider's client raises on a 429."""


MODELS = {
    "steady": scripted(""),
    "shaky": scripted("+"),
    "throttled": refusing(RateLimitError("Error code: 429 - Too Many Requests; retry after 7 s")),
    "garbled": refusing(ValueError("the model answered with an unparseable tool call")),
}

# Prices for the mock model ($2 and $10 a million tokens), so each run reports what it cost.
set_model_info(
    "mockllm/model",
    ModelInfo(cost=ModelCost(input=2.0, output=10.0, input_cache_write=0, input_cache_read=0)),
)
