"""The validation kit: field errors by dotted path, and the field checks every validator of what
clients send is made of. Pure (no Django), so the pure validators use it as the API does:
``evalsets.policy`` and ``evalsets.inputs``, ``signals_app``'s signal, rule and late-event
checks, and the API's JSON fields (``loopweb.runs.api.fields``).

A path names where in a document a value sits: ``gate.floor``, ``rungs.3.case``; ``""`` is the
document itself.
"""

import math
from collections.abc import Collection, Iterator, Mapping
from datetime import datetime
from typing import Any

from loopweb.runs.moments import BadMoment, read_moment


def join(prefix: str, name: str | int) -> str:
    """``prefix.name``; an empty name leaves the prefix as it is."""
    if name == "":
        return prefix
    return f"{prefix}.{name}" if prefix else str(name)


class Invalid(Exception):
    """Field errors from a pure check, keyed by dotted path ("" is the value itself); each message
    may carry a code (``codes``), as Django's and DRF's errors do."""

    def __init__(
        self, errors: dict[str, list[str]], codes: dict[str, list[str]] | None = None
    ) -> None:
        super().__init__(errors)
        self.errors = errors
        self.codes = codes or {path: ["invalid"] * len(m) for path, m in errors.items()}

    def prefixed(self, prefix: str) -> dict[str, list[str]]:
        return {join(prefix, path): messages for path, messages in self.errors.items()}


class Errors:
    """Field errors collected by dotted path, raised together."""

    def __init__(self) -> None:
        self.by_path: dict[str, list[tuple[str, str]]] = {}

    def add(self, path: str, message: str, code: str = "invalid") -> None:
        self.by_path.setdefault(path, []).append((message, code))

    def __bool__(self) -> bool:
        return bool(self.by_path)

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_path)

    def invalid(self) -> Invalid:
        return Invalid(
            {path: [m for m, _ in found] for path, found in self.by_path.items()},
            {path: [c for _, c in found] for path, found in self.by_path.items()},
        )

    def raise_if_any(self) -> None:
        if self.by_path:
            raise self.invalid()


# -- field checks -------------------------------------------------------------------------------


def is_number(value: Any) -> bool:
    """A finite JSON number; ``True`` is not a number here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def has_nul(value: Any) -> bool:
    """PostgreSQL text and jsonb cannot hold U+0000, so no stored string may carry it."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


def _given(raw: Mapping[str, Any], key: str, path: str, errors: Errors, *, required: bool) -> Any:
    """The key's value (None when absent), refused when it must be given and is not."""
    value = raw.get(key)
    if value is None and required:
        errors.add(path, "This field is required.", "required")
    return value


def string(
    raw: Mapping[str, Any], key: str, path: str, errors: Errors, *, required: bool, max_length: int
) -> str | None:
    value = _given(raw, key, path, errors, required=required)
    if value is None:
        return None
    if not isinstance(value, str):
        errors.add(path, "Must be a string.", "invalid")
        return None
    if not value.strip():
        errors.add(path, "Must not be blank.", "blank")
        return None
    if len(value) > max_length:
        errors.add(path, f"At most {max_length} characters.", "max_length")
        return None
    if has_nul(value):
        errors.add(path, "Null characters are not allowed.", "null_characters_not_allowed")
        return None
    return value


def choice(
    raw: Mapping[str, Any],
    key: str,
    path: str,
    errors: Errors,
    choices: Collection[str],
    *,
    required: bool,
    code: str = "invalid_choice",
) -> str | None:
    value = _given(raw, key, path, errors, required=required)
    if value is None:
        return None
    if not isinstance(value, str) or value not in choices:
        errors.add(path, f"One of: {', '.join(choices)}.", code)
        return None
    return value


def number(
    raw: Mapping[str, Any], key: str, path: str, errors: Errors, *, required: bool
) -> int | float | None:
    value = _given(raw, key, path, errors, required=required)
    if value is None:
        return None
    if not is_number(value):
        errors.add(path, "Must be a finite number.", "invalid")
        return None
    found: int | float = value
    return found


def json_object(
    raw: Mapping[str, Any], key: str, path: str, errors: Errors
) -> dict[str, Any] | None:
    """An optional JSON object with no NUL character in it."""
    value = raw.get(key)
    if value is not None and not isinstance(value, Mapping):
        errors.add(path, "Must be an object.", "invalid")
    elif value is not None and has_nul(value):
        errors.add(path, "Null characters are not allowed.", "null_characters_not_allowed")
    else:
        return None if value is None else dict(value)
    return None


def parse_timestamp(
    value: Any, path: str, errors: Errors, *, required: bool = True
) -> datetime | None:
    """An RFC 3339 timestamp with a time zone, written between the years 1900 and 9998."""
    if value is None:
        if required:
            errors.add(path, "This field is required.", "required")
        return None
    try:
        return read_moment(value)
    except BadMoment as exc:
        errors.add(path, str(exc), exc.code)
        return None


def unknown_keys(
    raw: Mapping[str, Any], allowed: Collection[str], prefix: str, errors: Errors
) -> None:
    for key in raw:
        if key not in allowed:
            errors.add(join(prefix, str(key)), "Unknown field.", "unknown_field")


def names(raw: Mapping[str, Any], key: str, path: str, errors: Errors) -> list[str] | None:
    """An optional list of distinct signal names."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        errors.add(path, "Must be a list of names.", "invalid")
        return None
    names: list[str] = []
    for index, item in enumerate(value):
        item_path = join(path, index)
        name = string({"n": item}, "n", item_path, errors, required=True, max_length=200)
        if name is None:
            continue
        if name in names:
            errors.add(item_path, f"{name!r} is listed twice.", "duplicate")
            continue
        names.append(name)
    return names
