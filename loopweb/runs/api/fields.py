"""Free JSON the API accepts must be JSON PostgreSQL's ``jsonb`` can store.

``json.loads`` accepts things ``jsonb`` refuses (NUL characters, lone surrogates, numbers that
overflow to infinity); refused here they are a 400 on the field instead of a database error.
"""

import math

from rest_framework import serializers

#: Deeper documents are refused: nothing Loopweb reads nests this far, and encoding one
#: would exhaust the interpreter's recursion limit.
MAX_JSON_DEPTH = 64


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate character"
    return None


def json_problem(value) -> str | None:
    """Why ``value`` cannot be stored as ``jsonb``, with where in it, or None."""
    stack = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        where = f" at {path}" if path else ""
        if depth > MAX_JSON_DEPTH:
            return f"nests deeper than {MAX_JSON_DEPTH} levels{where}"
        if isinstance(node, str):
            problem = _text_problem(node)
            if problem:
                return f"{problem}{where}"
        elif isinstance(node, float) and not math.isfinite(node):
            return f"holds a number out of range{where}"
        elif isinstance(node, dict):
            for key, item in node.items():
                key = str(key)
                problem = _text_problem(key)
                if problem:
                    return f"has a key that {problem}{where}"
                stack.append((item, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, f"{path}.{index}" if path else str(index), depth + 1))
    return None


def storable_json(value) -> None:
    """A DRF validator for JSON-valued fields."""
    problem = json_problem(value)
    if problem:
        raise serializers.ValidationError(f"This JSON {problem}.", code="invalid")
