"""Seed 000's request formats in the OpenAPI schema: the components come from the formats the
checks read (``signals_app.signal_checks.SIGNAL`` and ``LATE_EVENT``,
``signals_app.acceptance.RULE`` and ``SCORE_TARGET``), so the schema states what they accept.

What no schema can state is left to the checks alone: a name whose kind conflicts with the
signals already on the run, with another signal of the same request or with another part of the
same rule (E195), and an id already taken on the run by another signal.
"""

from loopweb.runs.api.schema import COMPONENTS, nullable, patch, ref
from signals_app import rules
from signals_app.acceptance import RULE, SCORE_TARGET
from signals_app.signal_checks import LATE_EVENT, SIGNAL

COMPONENTS.update({f.name: f.schema() for f in (SIGNAL, SCORE_TARGET, RULE, LATE_EVENT)})

SIGNALS = {
    "description": "A signal, or a list of them (all or none).",
    "anyOf": [
        ref(SIGNAL.name),
        {
            "type": "array",
            "minItems": 1,
            "maxItems": rules.MAX_SIGNALS_PER_REQUEST,
            "items": ref(SIGNAL.name),
        },
    ],
}
#: A push's ``signals``: as above, and an empty list adds none.
PUSHED_SIGNALS = {
    "anyOf": [
        ref(SIGNAL.name),
        {"type": "array", "maxItems": rules.MAX_SIGNALS_PER_REQUEST, "items": ref(SIGNAL.name)},
    ]
}

# A push carries its signals and, maybe, the rule it was recorded under.
for _push in ("RunPushRequest", "RunRepushRequest"):
    patch(_push, signals=PUSHED_SIGNALS, acceptance_rule=nullable(ref(RULE.name)))

#: What a post of signals answers: the signal, or the list, as stored.
SIGNALS_ANSWER = {"anyOf": [ref("Signal"), {"type": "array", "items": ref("Signal")}]}

#: The request bodies of signals_app's own endpoints.
SIGNALS_BODY = {"application/json": SIGNALS}
RULE_BODY = {"application/json": ref(RULE.name)}
LATE_EVENT_BODY = {"application/json": ref(LATE_EVENT.name)}
