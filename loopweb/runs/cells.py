"""Canonical keys for case pins, combination cells and coverage cells.

A coverage cell is a case pin crossed with a combination cell. Its key is stored on every job
and run, so matching runs and jobs to a slot is one indexed equality lookup.
"""

from dataclasses import dataclass
from typing import Any

#: Stored lengths (``cell_key`` columns and ``Combination.key``). A pin's parts are bounded by
#: the API (a 100-character case slug; 64-character version, variant and engine), so a
#: combination cell whose key fits ``MAX_COMBINATION_CELL_KEY`` makes a coverage cell that fits.
MAX_CELL_KEY = 700
MAX_COMBINATION_KEY = 500
MAX_PIN_KEY = 100 + 1 + 64 + 1 + 64 + 1 + 64
MAX_COMBINATION_CELL_KEY = MAX_CELL_KEY - MAX_PIN_KEY - len("::")


@dataclass(frozen=True, slots=True)
class CasePin:
    case: str
    version: str
    variant: str
    engine: str | None = None

    @property
    def key(self) -> str:
        return f"{self.case}@{self.version}/{self.variant}/{self.engine or '-'}"


@dataclass(frozen=True, slots=True)
class CombinationCell:
    harness: str
    model: str
    provider: str
    configuration_id: int | None = None
    bound_models: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        base = f"{self.harness}|{self.model}|{self.provider}"
        if self.configuration_id is None:
            return base
        return f"gg:{self.configuration_id}|{base}|{','.join(self.bound_models)}"

    def as_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness,
            "model": self.model,
            "provider": self.provider,
            "configuration": self.configuration_id,
            "boundModels": list(self.bound_models),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CombinationCell":
        return cls(
            harness=data["harness"],
            model=data["model"],
            provider=data["provider"],
            configuration_id=data.get("configuration"),
            bound_models=tuple(data.get("boundModels") or ()),
        )


def cell_key(pin: CasePin, combination: CombinationCell) -> str:
    return joined_cell_key(pin.key, combination.key)


#: Between a cell key's case pin and its combination cell.
CELL_KEY_JOIN = "::"


def joined_cell_key(pin_key: str, combination_key: str) -> str:
    """``cell_key`` from keys already made (for loops over thousands of cells)."""
    return f"{pin_key}{CELL_KEY_JOIN}{combination_key}"


def combination_key_of(key: str) -> str:
    """The combination cell's key within a coverage cell's key."""
    return key.split("::", 1)[-1]


def harness_key(harness: str, model: str, provider: str) -> str:
    return f"{harness}|{model}|{provider}"


def gg_key(configuration_id: int, bindings: dict[str, str]) -> str:
    bound = ",".join(f"{role}={bindings[role]}" for role in sorted(bindings))
    return f"gg:{configuration_id}|{bound}"
