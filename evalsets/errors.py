class Invalid(Exception):
    """Field errors from a pure check, keyed by dotted path ("" is the value itself)."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(errors)
        self.errors = errors

    def prefixed(self, prefix: str) -> dict[str, list[str]]:
        return {f"{prefix}.{path}" if path else prefix: m for path, m in self.errors.items()}
